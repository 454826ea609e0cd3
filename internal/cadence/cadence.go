// Package cadence keeps a topic's arrival rhythm: the times of its last
// few messages in a ring, written by the one goroutine that reads the
// topic and read by another, which judges from them whether the topic
// has gone silent (the client's stale check).
package cadence

import (
	"slices"
	"sync/atomic"
	"time"
)

// Samples is how many intervals of a topic the median is taken over; a
// topic is judged once it has them all.
const Samples = 16

// Rhythm is the arrival rhythm of one topic: the times of its last
// Samples+1 recorded messages, in a ring. Its reader (Observe) is its
// only writer; the judge reads it with atomics (Last, Median, IsStale,
// Judge); the last arrival and the intervals are worked out by the
// judge, not on the reader's path.
//
// A message is recorded only when the last recorded one is at least
// every old (Every), so a busy topic costs the reader a comparison a
// message and an atomic store only now and then. That changes no
// judgement: every is the floor over twice the factor, so a topic faster
// than it is measured at about it, and factor times that is under the
// floor, which then decides, as it would have for the true, shorter
// interval; a silence is overstated by at most every, a twentieth of the
// floor by default.
type Rhythm struct {
	arrivals [Samples + 1]atomic.Int64 // unix ns; 0: no message in the slot yet
	next     uint32                    // the slot written next; reader-owned
	recorded int64                     // unix ns of the last recorded message; reader-owned
	judged   atomic.Int64              // last+1 when the topic was last found stale: judged once per silence
}

// Every is how far apart a topic's messages are recorded, in ns, for a
// stale factor and floor; -1 when topics are not judged at all.
func Every(factor int, floor time.Duration) int64 {
	if factor <= 0 {
		return -1
	}
	return int64(floor) / int64(2*factor)
}

// Observe records a message arriving at now, unless the last recorded
// one is younger than every. Runs on the topic's reader.
func (k *Rhythm) Observe(now, every int64) {
	if now-k.recorded < every {
		return
	}
	k.recorded = now
	k.arrivals[k.next].Store(now)
	if k.next++; int(k.next) == len(k.arrivals) {
		k.next = 0
	}
}

// snapshot returns the recorded arrivals, sorted, and the count of them.
func (k *Rhythm) snapshot() (times [Samples + 1]int64, n int) {
	for i := range k.arrivals {
		if t := k.arrivals[i].Load(); t != 0 {
			times[n] = t
			n++
		}
	}
	slices.Sort(times[:n])
	return times, n
}

// Last is the unix ns of the last message, 0 before the first.
func (k *Rhythm) Last() int64 {
	var last int64
	for i := range k.arrivals {
		last = max(last, k.arrivals[i].Load())
	}
	return last
}

// Median is the median interval, or 0 before Samples of them.
func (k *Rhythm) Median() time.Duration {
	times, n := k.snapshot()
	if n < len(times) {
		return 0
	}
	var gaps [Samples]int64
	for i := range gaps {
		gaps[i] = times[i+1] - times[i]
	}
	slices.Sort(gaps[:])
	return time.Duration(gaps[Samples/2])
}

// Judge records that the topic was found stale at its last message: it
// is judged again only after another arrives.
func (k *Rhythm) Judge() { k.judged.Store(k.Last() + 1) }

// IsStale reports whether the topic was judged stale and no message came
// since.
func (k *Rhythm) IsStale() bool { return k.judged.Load() == k.Last()+1 }

// Restart starts a new connection's judgement: the rhythm is kept (a
// topic the new connection never delivers is still judged by it; the one
// interval spanning the outage barely moves a median of 16), and the
// silence is counted from the connection's start by the judge. Called
// while no reader runs.
func (k *Rhythm) Restart() { k.judged.Store(0) }
