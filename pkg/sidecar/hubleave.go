package sidecar

import (
	"context"
	"errors"
	"slices"
	"time"

	"go.uber.org/zap"

	"github.com/wsfan/wsfan/pkg/client"
)

// How the hub lets topics go: a released reference, the grace period
// after the last one, eviction from a full table, the gathered rounds of
// upstream unsubscribes, and a topic the upstream ended by itself.

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
	t.grace = time.AfterFunc(h.cfg.Grace, func() {
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
	h.queueLeaveLocked(t)
	h.mu.Unlock()
}

// evictLocked lets go of up to n topics in their grace period, none of
// keep, to make room in a full table: a churn of clients must not leave a
// bystander refused for topics nobody holds. Called with h.mu held; the
// upstream unsubscribes go in the next round (queueLeaveLocked).
func (h *hub) evictLocked(n int, keep []string) {
	for name, t := range h.topics {
		if n == 0 {
			return
		}
		if t.refs > 0 || t.dead || t.grace == nil || slices.Contains(keep, name) {
			continue
		}
		h.removeLocked(t)
		h.queueLeaveLocked(t)
		n--
	}
}

// queueLeaveLocked queues a topic taken out of the tables for the next
// round of upstream unsubscribes, which starts gatherWindow after the
// first topic of the round: topics that end together (a client holding
// many leaves, and their grace runs out at once) leave upstream in as few
// requests as the exchange allows, as they were subscribed, not one
// request a topic. Called with h.mu held.
func (h *hub) queueLeaveLocked(t *topic) {
	h.leaving = append(h.leaving, t)
	if len(h.leaving) > 1 {
		return // the round's timer is set
	}
	h.wg.Add(1) // done when the round has ended
	time.AfterFunc(gatherWindow, func() {
		defer h.wg.Done()
		h.mu.Lock()
		batch := h.leaving
		h.leaving = nil
		h.mu.Unlock()
		h.leave(batch)
	})
}

// leave ends topics taken out of the tables: it waits for their upstream
// subscribes, unsubscribes them in one call, and waits for their pumps.
func (h *hub) leave(topics []*topic) {
	streams := make([]client.Stream, 0, len(topics))
	for _, t := range topics {
		// Every subscriber may leave before the upstream subscribe
		// finishes (an SSE client that went away): it ends within
		// RequestTimeout.
		<-t.ready
		if t.err == nil { // else it failed: there is nothing to unsubscribe
			streams = append(streams, t.sub)
		}
	}
	if len(streams) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(h.ctx, h.cfg.RequestTimeout)
	defer cancel()
	f, err := h.feed(ctx)
	if err == nil {
		err = f.UnsubscribeStreams(ctx, streams)
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		h.log.Info("upstream unsubscribe failed", zap.Int("topics", len(streams)), zap.Error(err))
	}
	for _, t := range topics {
		if t.err == nil {
			<-t.done
		}
	}
	h.log.Debug("topics closed after their grace period", zap.Int("topics", len(streams)))
}

// removeLocked takes t out of the tables and cancels its pending expiry,
// which would find it dead. Called with h.mu held.
func (h *hub) removeLocked(t *topic) {
	t.dead = true
	h.stopGraceLocked(t)
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
// Called by the topic's goroutine once the pump has returned.
func (h *hub) lost(t *topic, err error) {
	h.mu.Lock()
	h.removeLocked(t)
	closed := h.closed
	h.mu.Unlock()
	if closed {
		return
	}
	h.log.Warn("upstream subscription ended", zap.String("topic", t.name), zap.Error(err))
	for _, s := range t.subscribers() {
		s.close(reasonTopicLost(t.upstream, err), true)
	}
}
