package sidecar

import (
	"runtime"
	"sync/atomic"
)

// A topic's pump offers each message to its subscribers (topic.publish).
// An offer to a caught-up client is a write(2) made by the goroutine
// that offers (session.offer), several µs on loopback, so from a few
// dozen clients on the offers are shared out over the processors: the
// pump and GOMAXPROCS-1 helper goroutines started for the message take
// the subscribers a chunk at a time until none is left (offerShare). A
// helper the machine starts late (its processor's thread woken from
// sleep, or given the core by the OS later; on the shared 2-core VM a
// new goroutine's start took 165 µs at the median and over 1 ms at p99)
// finds the chunks taken and ends at once: the pump waits only for the
// chunks another goroutine has begun, never for a helper to start. A
// fixed half each, as before, made the pump wait for its helper's start
// on most messages, and the next message queued behind it
// (wsfan_sidecar_delivery_delay_seconds at p99: 0.6-1 ms, issue 47).

// topicFrames are one message's frames, one an encoding in use (by id),
// the send slots that end those of a stamped encoding (encoder.live),
// and the marks that go before them when messages were lost upstream.
type topicFrames struct{ message, slot, hole [numEncodings][]byte }

// offerAll offers the frames to subs and counts the outcome. Offers made
// while caught up are writes from here, unless another message has come
// in behind this one meanwhile (checked every minOfferChunk offers): the
// rest go to the subscribers' writers, queued, so that the next message
// waits for no more than the writes begun (its receive-to-frames time at
// p99 was the writes of a message to 100 clients, issue 47).
func (t *topic) offerAll(subs []*session, frames *topicFrames, caughtUp bool) {
	var delivered, dropped uint64
	for i, s := range subs {
		if caughtUp && i%minOfferChunk == 0 && len(t.behind) > 0 {
			caughtUp = false
		}
		id := s.enc.id
		// A mark before the message: a hole upstream, or messages the
		// session dropped (dropnotice.go); most offers pay a load here.
		if s.marks && (frames.hole[id] != nil || s.nholes.Load() != 0) && !t.markHole(s, frames.hole[id]) {
			dropped++ // its mark found no room: the hole stays pending
			s.skipped()
			continue
		}
		if s.offerFrame(frames.message[id], frames.slot[id], caughtUp) {
			delivered++
			if s.nholes.Load() != 0 {
				s.holeFilled(t)
			}
		} else {
			dropped++
			s.droppedFor(t)
		}
	}
	t.delivered.Add(delivered)
	t.dropped.Add(dropped)
}

// parallelOffers is the subscriber count from which a message's offers
// are shared out over the processors: an offer to a caught-up client is
// a write(2) (several µs on loopback), so to 10,000 clients one
// goroutine would take tens of milliseconds to reach the last one.
const parallelOffers = 1024

// parallelDirectOffers is the same count while the pump is caught up:
// its offers to idle clients are then writes made from here, several µs
// each, so from a few dozen clients sharing them out brings the last one
// its message sooner (BenchmarkHopPeers at 1,000 msg/s to 100 clients:
// p50 -16 %, p99 -28 %, the server's CPU unchanged).
const parallelDirectOffers = 32

// minOfferChunk is the fewest subscribers a goroutine takes at a time: a
// chunk is a few write(2)s, so taking one costs little beside it.
const minOfferChunk = 4

// offerParallel is offerAll shared out between the pump and a helper
// goroutine a processor more (offerShare); it returns when every offer
// is made, so messages keep their order for every client.
func (t *topic) offerParallel(subs []*session, frames *topicFrames, caughtUp bool) {
	n := runtime.GOMAXPROCS(0)
	sh := &offerShare{t: t, subs: subs, frames: frames, caughtUp: caughtUp, done: make(chan struct{})}
	// About 8 chunks a goroutine: small enough that the pump, left
	// alone, is kept waiting by at most one chunk of a helper's.
	sh.chunk = max(minOfferChunk, len(subs)/(8*n))
	sh.left.Store(int64(len(subs)))
	for range n - 1 {
		go sh.take()
	}
	sh.take()
	<-sh.done
}

// offerShare is one message's offers, shared out by offerParallel. The
// goroutines that take chunks only read its fields but next and left.
type offerShare struct {
	t        *topic
	subs     []*session
	frames   *topicFrames
	caughtUp bool
	chunk    int
	next     atomic.Int64  // where the next chunk starts in subs
	left     atomic.Int64  // subscribers not yet offered the message
	done     chan struct{} // closed by whoever offers to the last of them
}

// take offers the message to chunk after chunk of subscribers until
// every chunk is taken.
func (sh *offerShare) take() {
	chunk := int64(sh.chunk)
	for {
		start := sh.next.Add(chunk) - chunk
		if start >= int64(len(sh.subs)) {
			return
		}
		part := sh.subs[start:min(start+chunk, int64(len(sh.subs)))]
		sh.t.offerAll(part, sh.frames, sh.caughtUp)
		if sh.left.Add(-int64(len(part))) == 0 {
			close(sh.done)
		}
	}
}
