package natsbridge

import (
	"sync/atomic"
	"time"
)

// rhythmSamples is how many messages a topic needs before it is judged
// silent: a topic with no rhythm yet is never silent.
const rhythmSamples = 16

// rhythm is a topic reader's arrival rhythm, for Member.Silent: when its
// last message arrived and a moving average of the intervals (each new
// interval weighs 1/8). The reader's handler writes it, under
// topicReader.mu; Silent reads it with atomics from any goroutine.
type rhythm struct {
	last atomic.Int64 // unix ns of the last message, 0 before the first
	avg  atomic.Int64 // ns
	n    atomic.Int64 // messages observed, up to rhythmSamples
}

// observe records a message arriving at now (unix ns).
func (r *rhythm) observe(now int64) {
	last := r.last.Swap(now)
	if last == 0 {
		r.n.Store(1)
		return
	}
	gap := max(now-last, 0)
	switch n := r.n.Load(); {
	case n == 1:
		r.avg.Store(gap)
	default:
		avg := r.avg.Load()
		r.avg.Store(avg + (gap-avg)/8)
	}
	if n := r.n.Load(); n < rhythmSamples {
		r.n.Store(n + 1)
	}
}

// silentFor reports whether the topic has been silent at now for longer
// than factor times its usual interval and at least floor.
func (r *rhythm) silentFor(now int64, factor int, floor time.Duration) bool {
	if factor <= 0 || r.n.Load() < rhythmSamples {
		return false
	}
	limit := max(time.Duration(int64(factor)*r.avg.Load()), floor)
	return time.Duration(now-r.last.Load()) > limit
}

// WithSilentAfter sets when Member.Silent finds a topic silent: no
// message for factor times its usual interval (a moving average over its
// messages, judged after 16 of them), and at least floor, as
// client.WithStaleAfter judges a direct connection's topics. factor 0
// turns it off. Default: 10, 5s.
func WithSilentAfter(factor int, floor time.Duration) Option {
	return func(c *config) { c.silentFactor, c.silentFloor = factor, floor }
}

// Silent reports whether topic, held by a subscription of this member,
// has had no message from the group for longer than its limit
// (WithSilentAfter): the leader's upstream, the leader or this member's
// NATS link is failing, whichever it is. False for a topic no
// subscription holds and one without a rhythm yet.
func (m *Member) Silent(topic string) bool {
	now := time.Now().UnixNano()
	m.mu.Lock()
	defer m.mu.Unlock()
	for s := range m.subs {
		for _, r := range s.readers {
			if r.names.topic == topic && r.rhythm.silentFor(now, m.cfg.silentFactor, m.cfg.silentFloor) {
				return true
			}
		}
	}
	return false
}
