package sidecar

import (
	"bytes"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// topicConfig is what every topic is built from; the hub holds one.
type topicConfig struct {
	wire  protocol.Server // the local notification frame
	cache bool            // Config.LastMessageCache
	stats *stats          // the Server's resume counters
}

// topic is one upstream subscription shared by every local subscriber of
// it. Its goroutine (hub.run) is the only reader of sub.
type topic struct {
	name    string
	localID string // the subscription id local Ethereum clients see
	cfg     topicConfig

	prefix, suffix []byte // the local notification frame around a payload
	ssePrefix      []byte // "event: NAME\ndata: "

	ready chan struct{} // closed when the upstream subscribe has finished
	err   error         // why it failed; set before ready closes
	sub   feed          // set before ready closes, if the subscribe succeeded
	done  chan struct{} // closed when the pump has ended, or the subscribe failed

	// mu orders attach (and the cached message a joiner gets first)
	// against the pump's publish, so a joiner sees no gap and no repeat.
	mu      sync.Mutex
	subs    []*session // copy on write: the pump offers to a snapshot
	nSSE    int
	last    []byte // the last payload, when the cache is on
	hasLast bool

	// hub.mu protects the following.
	refs  int
	grace *time.Timer
	gen   uint64 // bumped whenever grace changes, to spot a stale expiry
	dead  bool   // removed from the hub

	received  atomic.Uint64
	delivered atomic.Uint64
	dropped   atomic.Uint64
	resumes   atomic.Uint64
	rate      atomic.Uint64 // float64 bits: messages/s over the last sample
	sampled   uint64        // received at the last sample; owned by the sampler
}

func newTopic(name string, cfg topicConfig) *topic {
	t := &topic{name: name, cfg: cfg, ready: make(chan struct{}), done: make(chan struct{})}
	t.localID = cfg.wire.SubscriptionID()
	t.prefix, t.suffix = cfg.wire.Envelope(name, t.localID)
	t.ssePrefix = append(append([]byte("event: "), sseSafe(name)...), "\ndata: "...)
	return t
}

// fail marks the topic's upstream subscribe failed with err.
func (t *topic) fail(err error) {
	t.err = err
	close(t.done)
	close(t.ready)
}

// pump makes sub the topic's upstream subscription, marks the topic
// ready, and forwards every message of sub to the local subscribers until
// sub ends. It returns why sub ended: nil after an unsubscribe.
func (t *topic) pump(sub feed) error {
	defer close(t.done)
	t.sub = sub
	close(t.ready)
	ch := sub.C()
	for m := range ch {
		t.publish(m, len(ch) == 0)
	}
	return <-sub.Err()
}

// publish encodes m once per format and offers the same bytes to every
// subscriber. It never blocks. caughtUp says no message waits behind m:
// then subscribers with nothing queued are written to from here (see
// session.offer); behind a backlog their writers batch instead.
func (t *topic) publish(m client.Message, caughtUp bool) {
	t.received.Add(1)
	resumed := m.Flags&client.FlagReconnected != 0
	if resumed {
		t.resumes.Add(1)
		t.cfg.stats.resumes.Add(1)
		t.cfg.stats.lastResume.Store(time.Now().UnixNano())
	}
	ws := textFrame(t.prefix, m.Data, t.suffix)

	t.mu.Lock()
	subs := t.subs
	var sse []byte
	if t.nSSE > 0 {
		sse = t.sseEvent(m.Data, resumed)
	}
	if t.cfg.cache {
		t.last, t.hasLast = m.Data, true
	}
	t.mu.Unlock()

	var delivered, dropped uint64
	for _, s := range subs {
		f := ws
		if s.kind == kindSSE {
			f = sse
		}
		if s.offer(f, caughtUp) {
			delivered++
		} else {
			dropped++
		}
	}
	t.delivered.Add(delivered)
	t.dropped.Add(dropped)
}

// attachLocked adds s as a subscriber, queueing the cached last message
// first. Called with t.mu held (session.attach).
func (t *topic) attachLocked(s *session) {
	next := make([]*session, len(t.subs), len(t.subs)+1)
	copy(next, t.subs)
	t.subs = append(next, s)
	if s.kind == kindSSE {
		t.nSSE++
	}
	if !t.hasLast {
		return
	}
	f := textFrame(t.prefix, t.last, t.suffix)
	if s.kind == kindSSE {
		f = t.sseEvent(t.last, false)
	}
	if s.offer(f, false) {
		t.delivered.Add(1)
	} else {
		t.dropped.Add(1)
	}
}

// detach removes s; it reports whether s was attached.
func (t *topic) detach(s *session) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i, x := range t.subs {
		if x == s {
			next := make([]*session, 0, len(t.subs)-1)
			next = append(append(next, t.subs[:i]...), t.subs[i+1:]...)
			t.subs = next
			if s.kind == kindSSE {
				t.nSSE--
			}
			return true
		}
	}
	return false
}

// subscribers returns the attached sessions.
func (t *topic) subscribers() []*session {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.subs
}

// sseEvent encodes one SSE event. JSON never needs a raw line break, so
// any (pretty-printing whitespace) becomes a space and the data stays one
// line. After an upstream reconnect a wsfan.reconnected event goes first.
func (t *topic) sseEvent(data []byte, resumed bool) []byte {
	n := len(t.ssePrefix) + len(data) + 2
	var pre []byte
	if resumed {
		pre = protocol.AppendJSONString([]byte("event: wsfan.reconnected\ndata: {\"topic\":"), t.name)
		pre = append(pre, "}\n\n"...)
		n += len(pre)
	}
	f := make([]byte, 0, n)
	f = append(f, pre...)
	f = append(f, t.ssePrefix...)
	start := len(f)
	f = append(f, data...)
	if bytes.ContainsAny(data, "\r\n") {
		for i := start; i < len(f); i++ {
			if f[i] == '\n' || f[i] == '\r' {
				f[i] = ' '
			}
		}
	}
	return append(f, '\n', '\n')
}

// sample updates the topic's rate. Called by the sampler goroutine only.
func (t *topic) sample(elapsed time.Duration) {
	n := t.received.Load()
	rate := float64(n-t.sampled) / elapsed.Seconds()
	t.sampled = n
	t.rate.Store(math.Float64bits(rate))
}

// status returns the topic's line of /v1/status; refs is its reference
// count, read under hub.mu.
func (t *topic) status(refs int) TopicStatus {
	ts := TopicStatus{
		Topic:     t.name,
		LocalID:   t.localID,
		Refs:      refs,
		Rate:      math.Float64frombits(t.rate.Load()),
		Received:  t.received.Load(),
		Delivered: t.delivered.Load(),
		Dropped:   t.dropped.Load(),
		Resumes:   t.resumes.Load(),
	}
	select {
	case <-t.ready:
		if t.sub != nil {
			ts.UpstreamDropped = t.sub.Dropped()
		}
	default:
	}
	return ts
}

// sseSafe removes line breaks from a topic used as an SSE event name.
func sseSafe(s string) []byte {
	b := []byte(s)
	for i, c := range b {
		if c == '\n' || c == '\r' {
			b[i] = ' '
		}
	}
	return b
}
