package natsbridge

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"

	"github.com/wsfan/wsfan/pkg/protocol"
)

// wantSet is the set of topics this member's subscriptions want, with a
// reference count per topic. The announcer goroutine (announce) keeps
// the member's key in the group's wants bucket equal to it.
type wantSet struct {
	kick chan struct{} // capacity 1: the set changed

	// mu protects the following.
	mu   sync.Mutex
	refs map[string]int
	// parsed are the wanted topics a holder's reader handed over parsed
	// (SubscribeTopics), for as long as they are wanted: a leader in this
	// process subscribes them upstream without parsing them again.
	parsed  map[string]*protocol.Topic
	version uint64        // bumped whenever the set of topics changes
	stored  uint64        // the version last stored in the bucket
	waiters chan struct{} // closed and replaced whenever stored grows
}

func newWantSet() *wantSet {
	return &wantSet{
		kick:    make(chan struct{}, 1),
		refs:    make(map[string]int),
		parsed:  make(map[string]*protocol.Topic),
		waiters: make(chan struct{}),
	}
}

// add takes a reference on topics and returns the version of the set
// that includes them; parsed, when not nil, holds each topic parsed
// (parsed[i] is topics[i]), kept while the topic is wanted.
func (w *wantSet) add(topics []string, parsed []*protocol.Topic) uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	changed := false
	for i, t := range topics {
		if w.refs[t]++; w.refs[t] == 1 {
			changed = true
		}
		if parsed != nil && w.parsed[t] == nil {
			w.parsed[t] = parsed[i]
		}
	}
	if changed {
		w.version++
		w.signal()
	}
	return w.version
}

// release drops a reference on topics.
func (w *wantSet) release(topics []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	changed := false
	for _, t := range topics {
		switch n := w.refs[t]; {
		case n > 1:
			w.refs[t] = n - 1
		case n == 1:
			delete(w.refs, t)
			delete(w.parsed, t)
			changed = true
		}
	}
	if changed {
		w.version++
		w.signal()
	}
}

// parsedTopic returns topic as a holder's reader parsed it, or nil
// when none of this member's subscriptions handed it over parsed.
func (w *wantSet) parsedTopic(topic string) *protocol.Topic {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.parsed[topic]
}

func (w *wantSet) signal() {
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// wait returns once version (or a later one) is stored.
func (w *wantSet) wait(ctx context.Context, version uint64) error {
	for {
		w.mu.Lock()
		ok, ch := w.stored >= version, w.waiters
		w.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// snapshot returns the topics, sorted, and their version.
func (w *wantSet) snapshot() ([]string, uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	topics := make([]string, 0, len(w.refs))
	for t := range w.refs {
		topics = append(topics, t)
	}
	slices.Sort(topics)
	return topics, w.version
}

func (w *wantSet) markStored(version uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if version > w.stored {
		w.stored = version
		close(w.waiters)
		w.waiters = make(chan struct{})
	}
}

// announce is the announcer goroutine: it stores the member's wanted
// topics whenever they change and every third of the wants TTL, so the
// leader sees them and they expire if the member dies. It deletes the
// member's key when ctx ends.
func (m *Member) announce(ctx context.Context) {
	defer m.wg.Done()
	kv, key := m.res.wants, m.cfg.id
	refresh := time.NewTicker(m.res.wantTTL / 3)
	defer refresh.Stop()
	bo := m.newBackoff()
	failing := false
	for {
		topics, version := m.wants.snapshot()
		value, _ := json.Marshal(topics) // a []string always encodes
		pctx, cancel := context.WithTimeout(ctx, m.res.wantTTL/3)
		_, err := kv.Put(pctx, key, value)
		cancel()
		var retry <-chan time.Time
		switch {
		case err == nil:
			m.wants.markStored(version)
			bo.Reset()
			if failing {
				m.log.Info("natsbridge: wanted topics stored again", zap.Int("topics", len(topics)))
				failing = false
			}
		case ctx.Err() == nil:
			wait := bo.NextBackOff()
			retry = time.After(wait)
			if !failing {
				m.log.Warn("natsbridge: failed to store wanted topics; retrying", zap.Error(err), zap.Duration("in", wait))
				failing = true
			}
		}
		select {
		case <-retry:
		case <-m.wants.kick:
		case <-refresh.C:
		case <-ctx.Done():
			dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
			if err := kv.Delete(dctx, key); err != nil {
				m.log.Debug("natsbridge: failed to withdraw wanted topics", zap.Error(err))
			}
			cancel()
			return
		}
	}
}

// decodeWants reads a member's entry in the wants bucket.
func decodeWants(e jetstream.KeyValueEntry) ([]string, bool) {
	var topics []string
	if err := json.Unmarshal(e.Value(), &topics); err != nil {
		return nil, false
	}
	return topics, true
}
