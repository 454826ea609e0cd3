package sidecar

import (
	"runtime"
	"sync"
)

// A topic's pump offers each message to its subscribers (topic.publish).

// topicFrames are one message's frames, one an encoding in use (by id),
// the send slots that end those of a stamped encoding (encoder.live),
// and the marks that go before them when messages were lost upstream.
type topicFrames struct{ message, slot, hole [numEncodings][]byte }

// offerAll offers the frames to subs and counts the outcome.
func (t *topic) offerAll(subs []*session, frames *topicFrames, caughtUp bool) {
	var delivered, dropped uint64
	for _, s := range subs {
		id := s.enc.id
		if frames.hole[id] != nil && s.marks {
			s.offer(frames.hole[id], false)
		}
		if s.offerFrame(frames.message[id], frames.slot[id], caughtUp) {
			delivered++
		} else {
			dropped++
		}
	}
	t.delivered.Add(delivered)
	t.dropped.Add(dropped)
}

// parallelOffers is the subscriber count from which a message's offers
// are split over the processors: an offer to a caught-up client is a
// write(2) (several µs on loopback), so to 10,000 clients one goroutine
// would take tens of milliseconds to reach the last one.
const parallelOffers = 1024

// parallelDirectOffers is the same count while the pump is caught up:
// its offers to idle clients are then writes made from here, several µs
// each, so from a few dozen clients splitting them brings the last one
// its message sooner (BenchmarkHopPeers at 1,000 msg/s to 100 clients:
// p50 -16 %, p99 -28 %, the server's CPU unchanged).
const parallelDirectOffers = 32

// offerParallel is offerAll over one goroutine a processor, each taking
// a contiguous share of subs, the pump's own among them; it returns when
// every offer is made, so messages keep their order for every client.
func (t *topic) offerParallel(subs []*session, frames *topicFrames, caughtUp bool) {
	n := runtime.GOMAXPROCS(0)
	share := (len(subs) + n - 1) / n
	var wg sync.WaitGroup
	for start := share; start < len(subs); start += share {
		part := subs[start:min(start+share, len(subs))]
		wg.Add(1)
		go func() {
			defer wg.Done()
			t.offerAll(part, frames, caughtUp)
		}()
	}
	t.offerAll(subs[:share], frames, caughtUp)
	wg.Wait()
}
