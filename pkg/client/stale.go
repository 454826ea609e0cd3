package client

import (
	"slices"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
)

// A topic can go silent while its connection is fine: the server lost
// the subscription, or its feed behind the subscription stalled. Pings
// cannot see that; the topic's own rhythm can. The reader notes when each
// message of a topic arrives (cadence.observe); the supervisor checks
// every topic once a second (checkStale). A topic silent for staleFactor
// times its median interval, and at least staleFloor, while another topic
// of the connection received messages after that point, is stale: a Stale
// event, wsfan_client_stale_total, and one resubscribe, so the server
// sends it afresh; its next message is flagged FlagStale. It is checked
// again only after a message arrived.

// staleCheckEvery is how often the supervisor looks for stale topics.
const staleCheckEvery = time.Second

// cadenceSamples is how many intervals of a topic the median is taken
// over; a topic is judged once it has them all.
const cadenceSamples = 16

// cadence is the arrival rhythm of one topic: the times of its last
// cadenceSamples+1 recorded messages, in a ring. The reader goroutine is
// its only writer (the supervisor reads it with atomics); the last
// arrival and the intervals are worked out by the reader of the ring,
// once a second, not on the hot path.
//
// A message is recorded only when the last recorded one is at least
// Client.cadenceEvery old, so a busy topic costs the reader a comparison
// a message and an atomic store only now and then. That changes no
// judgement: cadenceEvery is the floor over twice the factor
// (WithStaleAfter), so a topic faster than it is measured at about it,
// and factor times that is under the floor, which then decides, as it
// would have for the true, shorter interval; a silence is overstated by
// at most cadenceEvery, a twentieth of the floor by default.
type cadence struct {
	arrivals [cadenceSamples + 1]atomic.Int64 // unix ns; 0: no message in the slot yet
	next     uint32                           // the slot written next; reader-owned
	recorded int64                            // unix ns of the last recorded message; reader-owned
	judged   atomic.Int64                     // last+1 when the topic was last found stale: judged once per silence
}

// observe records a message arriving at now, unless the last recorded
// one is younger than every. Runs on the reader goroutine.
func (k *cadence) observe(now, every int64) {
	if now-k.recorded < every {
		return
	}
	k.recorded = now
	k.arrivals[k.next].Store(now)
	if k.next++; int(k.next) == len(k.arrivals) {
		k.next = 0
	}
}

// cadenceEvery is how far apart a topic's messages are recorded, in ns,
// for a factor and floor of WithStaleAfter; -1 when topics are not
// judged at all.
func cadenceEvery(factor int, floor time.Duration) int64 {
	if factor <= 0 {
		return -1
	}
	return int64(floor) / int64(2*factor)
}

// snapshot returns the recorded arrivals, sorted, and the count of them.
func (k *cadence) snapshot() (times [cadenceSamples + 1]int64, n int) {
	for i := range k.arrivals {
		if t := k.arrivals[i].Load(); t != 0 {
			times[n] = t
			n++
		}
	}
	slices.Sort(times[:n])
	return times, n
}

// last is the unix ns of the last message, 0 before the first.
func (k *cadence) last() int64 {
	var last int64
	for i := range k.arrivals {
		last = max(last, k.arrivals[i].Load())
	}
	return last
}

// median is the median interval, or 0 before cadenceSamples of them.
func (k *cadence) median() time.Duration {
	times, n := k.snapshot()
	if n < len(times) {
		return 0
	}
	var gaps [cadenceSamples]int64
	for i := range gaps {
		gaps[i] = times[i+1] - times[i]
	}
	slices.Sort(gaps[:])
	return time.Duration(gaps[cadenceSamples/2])
}

// isStale reports whether the topic was found stale and no message came
// since.
func (k *cadence) isStale() bool { return k.judged.Load() == k.last()+1 }

// restart starts a new connection's judgement: the rhythm is kept (a
// topic the new connection never delivers is still judged by it; the one
// interval spanning the outage barely moves a median of 16), and the
// silence is counted from the connection's start (Client.upSince).
// Called by the supervisor while no reader runs.
func (k *cadence) restart() { k.judged.Store(0) }

// silence is how long the topic has been silent on the connection up
// since upSince (unix ns), and the silence that makes it stale: 0 when
// it has no rhythm yet.
func (c *Client) silence(ts *topicState, now, upSince int64) (silent, limit time.Duration) {
	median := ts.cadence.median()
	if median == 0 || c.cfg.staleFactor <= 0 {
		return 0, 0
	}
	since := max(ts.cadence.last(), upSince)
	return time.Duration(now - since), max(time.Duration(c.cfg.staleFactor)*median, c.cfg.staleFloor)
}

// checkStale finds the stale topics of the current connection and
// resubscribes each. Runs on the supervisor goroutine.
func (c *Client) checkStale(now time.Time) {
	if c.cfg.staleFactor <= 0 || c.conn.Load() == nil {
		return
	}
	upSince := c.upSince.Load()
	c.mu.Lock()
	all := c.topics.all()
	var newest int64
	for _, ts := range all {
		newest = max(newest, ts.cadence.last())
	}
	var stale []*topicState
	nowNs := now.UnixNano()
	for _, ts := range all {
		silent, limit := c.silence(ts, nowNs, upSince)
		if limit == 0 || !ts.confirmed || ts.cadence.isStale() || silent <= limit {
			continue
		}
		// The silence began at nowNs-silent; another topic flowed after
		// it had grown too long.
		if newest-(nowNs-int64(silent)) > int64(limit) {
			ts.cadence.judged.Store(ts.cadence.last() + 1)
			stale = append(stale, ts)
		}
	}
	c.mu.Unlock()
	for _, ts := range stale {
		c.stats.stale.Add(1)
		c.log.Warn("topic silent while others flow; resubscribing",
			zap.String("topic", ts.name), zap.Duration("median_interval", ts.cadence.median()))
		c.emit(Event{Kind: Stale, Topic: ts.name})
		ts.stale.Store(true)
		c.refreshTopic(ts)
	}
}

// Stale reports whether topic was found stale (WithStaleAfter) and no
// message of it arrived since; false for a topic not held.
func (c *Client) Stale(topic string) bool {
	c.mu.Lock()
	ts := c.topics.get(topic)
	c.mu.Unlock()
	return ts != nil && ts.cadence.isStale()
}

// Silent reports whether topic has been silent for longer than its stale
// limit (WithStaleAfter), whether or not other topics flow: what a
// readiness check asks of every topic at once. False for a topic not
// held, one without a rhythm yet (16 intervals), and while disconnected.
func (c *Client) Silent(topic string) bool {
	if c.conn.Load() == nil {
		return false
	}
	c.mu.Lock()
	ts := c.topics.get(topic)
	c.mu.Unlock()
	if ts == nil {
		return false
	}
	silent, limit := c.silence(ts, time.Now().UnixNano(), c.upSince.Load())
	return limit > 0 && silent > limit
}
