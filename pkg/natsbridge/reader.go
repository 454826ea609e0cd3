package natsbridge

import (
	"errors"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/wsfan/wsfan/pkg/client"
)

// topicReader is one topic of a Subscription: a NATS subscription on the
// topic's live subject whose handler (a goroutine nats.go runs per
// subscription) turns messages into client.Messages.
//
// Until start, the handler only queues what arrives, so that the last
// value, read after the live interest was registered, goes first and the
// live messages it already contains are dropped as duplicates.
type topicReader struct {
	s     *Subscription
	names topicNames
	sub   *nats.Subscription

	// mu serializes the handler with start.
	mu      sync.Mutex
	started bool
	pending []*nats.Msg // live messages that arrived before start
	lost    bool        // a live message was dropped from pending
	pos     position

	rhythm rhythm   // written by the handler under mu; read by Member.Silent
	late   lateness // the live messages' runs of late ones, under mu
}

func newTopicReader(s *Subscription, names topicNames) *topicReader {
	return &topicReader{s: s, names: names}
}

// onMsg is the NATS handler.
func (r *topicReader) onMsg(msg *nats.Msg) {
	r.mu.Lock()
	if !r.started {
		if len(r.pending) == r.s.in.Capacity() { // the overflow shows as a gap
			r.pending[0] = nil
			r.pending = r.pending[1:]
			r.s.drop()
			r.lost = true
		}
		r.pending = append(r.pending, msg)
		r.mu.Unlock()
		return
	}
	release := r.handle(msg.Header, msg.Data, time.Now(), true)
	r.mu.Unlock()
	if release {
		r.s.release()
	}
}

// start delivers the last value (h and data; nil h for none), then the
// queued live messages, and lets the handler deliver from then on.
func (r *topicReader) start(h nats.Header, data []byte) {
	r.mu.Lock()
	now := time.Now()
	release := false
	if h != nil {
		release = r.handle(h, data, now, false)
		// The cache may lag the live subject by a message or two; what
		// it misses went out before this reader's interest did.
		r.pos.cached = r.pos.epoch != 0 && !r.lost
	}
	for i, msg := range r.pending {
		if !release {
			release = r.handle(msg.Header, msg.Data, now, false)
		}
		r.pending[i] = nil
	}
	r.pending = nil
	r.started = true
	r.mu.Unlock()
	if release {
		r.s.release()
	}
}

// handle delivers one message if it moves the topic forward; a live one
// (arrived on the live subject after start) that starts a run of late
// ones is flagged stale (WithLateAfter). The last value and the messages
// queued before start are not judged: they wait for the cache read.
// Called with r.mu held; it reports whether the subscription must be
// released.
func (r *topicReader) handle(h nats.Header, data []byte, now time.Time, live bool) (release bool) {
	st := &r.s.m.stats
	md, ok := parseMeta(h)
	if !ok || (r.names.hashed && md.topic != r.names.topic) {
		st.invalid.Add(1)
		return false
	}
	if md.refusal != "" {
		if md.epoch < r.pos.epoch {
			st.stale.Add(1)
			return false
		}
		cause := errors.New(md.refusal)
		r.s.finish(&client.RefusedError{Topics: []string{r.names.topic}, Cause: cause})
		return false
	}
	v, step, flags := r.pos.advance(md.epoch, md.seq)
	switch v {
	case duplicate:
		st.duplicates.Add(1)
		return false
	case stale:
		st.stale.Add(1)
		return false
	}
	r.rhythm.observe(now.UnixNano())
	if live && r.late.mark(md.recv, now, r.s.m.cfg.lateAfter) {
		flags |= client.FlagStale
	}
	m := client.Message{
		Topic:    r.names.topic,
		Data:     data,
		Flags:    md.flags | flags,
		RecvTime: now,
	}
	if md.venue > 0 {
		m.ExchangeTime = time.Unix(0, md.venue)
	}
	if md.recv > 0 {
		m.UpstreamRecvTime = time.Unix(0, md.recv)
	}
	return r.s.deliver(m, step)
}

// stop unsubscribes from NATS; a handler already running finishes.
func (r *topicReader) stop() {
	if r.sub != nil {
		_ = r.sub.Unsubscribe()
	}
}
