package sidecar

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"go.uber.org/zap"
)

// ErrClosed is returned for work asked of a Server that is closing.
var ErrClosed = errors.New("sidecar: closed")

// hub reference-counts upstream subscriptions: the first local subscriber
// of a topic opens it, and the last one leaving starts a grace timer whose
// expiry closes it.
type hub struct {
	srv *Server

	// mu protects the following and every topic's refs, grace, gen, dead.
	mu      sync.Mutex
	topics  map[string]*topic
	byLocal map[string]*topic // Ethereum local subscription id → topic
	closed  bool

	// wg counts open and pump goroutines and pending grace expiries.
	wg sync.WaitGroup
}

func newHub(srv *Server) *hub {
	return &hub{srv: srv, topics: make(map[string]*topic), byLocal: make(map[string]*topic)}
}

// reserve takes a reference on topic name, opening it upstream in the
// background if it is new. It does not wait; see wait.
func (h *hub) reserve(name string) (*topic, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, ErrClosed
	}
	t := h.topics[name]
	if t == nil {
		if len(h.topics) >= h.srv.cfg.MaxTopics {
			return nil, fmt.Errorf("sidecar: the limit of %d upstream topics is reached", h.srv.cfg.MaxTopics)
		}
		t = newTopic(h, name)
		h.topics[name] = t
		if t.localID != "" {
			h.byLocal[t.localID] = t
		}
		h.wg.Add(1)
		go t.open()
	}
	t.refs++
	h.stopGraceLocked(t)
	return t, nil
}

// wait waits for a reserved topic's upstream subscribe. On failure the
// reference is released and the error returned.
func (h *hub) wait(ctx context.Context, t *topic) error {
	select {
	case <-t.ready:
	case <-ctx.Done():
		h.release(t)
		return ctx.Err()
	}
	if t.err != nil {
		h.release(t)
		return t.err
	}
	return nil
}

// open subscribes upstream and starts the pump. It runs on its own
// goroutine, so the topics one request asks for open concurrently.
func (t *topic) open() {
	h := t.hub
	defer h.wg.Done()
	ctx, cancel := context.WithTimeout(h.srv.ctx, h.srv.cfg.RequestTimeout)
	defer cancel()
	sub, err := h.srv.up.subscribe(ctx, t.name)
	if err != nil {
		h.mu.Lock()
		h.removeLocked(t)
		h.mu.Unlock()
		t.err = err
		close(t.done)
		close(t.ready)
		h.srv.log.Info("upstream subscribe failed", zap.String("topic", t.name), zap.Error(err))
		return
	}
	t.sub = sub
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		t.pump()
	}()
	close(t.ready)
}

// release drops a reference; the last one starts the grace timer.
func (h *hub) release(t *topic) {
	h.mu.Lock()
	defer h.mu.Unlock()
	t.refs--
	if t.refs > 0 || t.dead || h.closed {
		return
	}
	t.gen++
	gen := t.gen
	h.wg.Add(1)
	t.grace = time.AfterFunc(h.srv.cfg.Grace, func() {
		defer h.wg.Done()
		h.expire(t, gen)
	})
}

// stopGraceLocked cancels a pending expiry. Called with h.mu held.
func (h *hub) stopGraceLocked(t *topic) {
	if t.grace == nil {
		return
	}
	if t.grace.Stop() {
		h.wg.Done() // the expiry will never run
	}
	t.grace = nil
	t.gen++
}

// expire unsubscribes upstream a topic whose grace period ran out with
// no subscriber.
func (h *hub) expire(t *topic, gen uint64) {
	h.mu.Lock()
	if t.gen != gen || t.refs > 0 || t.dead || h.closed {
		h.mu.Unlock()
		return
	}
	t.grace = nil
	h.removeLocked(t)
	h.mu.Unlock()

	ctx, cancel := context.WithTimeout(h.srv.ctx, h.srv.cfg.RequestTimeout)
	defer cancel()
	if err := t.sub.Unsubscribe(ctx); err != nil && !errors.Is(err, context.Canceled) {
		h.srv.log.Info("upstream unsubscribe failed", zap.String("topic", t.name), zap.Error(err))
	}
	<-t.done
	h.srv.log.Debug("topic closed after its grace period", zap.String("topic", t.name))
}

// removeLocked takes t out of the tables. Called with h.mu held.
func (h *hub) removeLocked(t *topic) {
	t.dead = true
	if h.topics[t.name] == t {
		delete(h.topics, t.name)
	}
	if t.localID != "" && h.byLocal[t.localID] == t {
		delete(h.byLocal, t.localID)
	}
}

// lost handles an upstream subscription that ended by itself (refused
// after a reconnect, reconnecting gave up): its local subscribers are
// disconnected with the reason, so they reconnect and subscribe again.
// Called by the topic's pump.
func (h *hub) lost(t *topic, err error) {
	h.mu.Lock()
	h.removeLocked(t)
	closed := h.closed
	h.mu.Unlock()
	if closed {
		return
	}
	h.srv.log.Warn("upstream subscription ended", zap.String("topic", t.name), zap.Error(err))
	for _, s := range t.subscribers() {
		s.close(reasonTopicLost(t.name, err), true)
	}
}

// list returns the live topics sorted by name.
func (h *hub) list() []*topic {
	h.mu.Lock()
	out := make([]*topic, 0, len(h.topics))
	for _, t := range h.topics {
		out = append(out, t)
	}
	h.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// refs returns t's reference count.
func (h *hub) refs(t *topic) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return t.refs
}

// close cancels every grace timer and waits for the hub's goroutines. The
// upstream client must be closing, which ends every pump.
func (h *hub) close() {
	h.mu.Lock()
	h.closed = true
	for _, t := range h.topics {
		h.stopGraceLocked(t)
	}
	h.mu.Unlock()
	h.wg.Wait()
}
