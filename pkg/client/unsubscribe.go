package client

import (
	"context"
	"errors"
	"fmt"
)

// unsubscribe detaches s from its topics, unsubscribes on the server the
// topics nobody else holds, and ends s with reason. s ends before the
// server is waited for, so a reader blocked on s (Block policy) is freed.
func (c *Client) unsubscribe(ctx context.Context, s *Subscription, reason error) error {
	return c.unsubscribeOn(ctx, nil, []*Subscription{s}, reason)
}

// UnsubscribeEach ends every subscription of subs, all at once: the
// topics none of them shares with a subscription left are unsubscribed on
// the server in one round of requests (as few as the exchange's limits
// allow, paced by its budget as subscribes are), which it waits for. What
// a fan-out server needs when many topics end together, without a
// request a topic. A subscription already ended, or nil, is skipped; one
// of another client (or a Pool's) is an error, and nothing is
// unsubscribed.
func (c *Client) UnsubscribeEach(ctx context.Context, subs []*Subscription) error {
	for _, s := range subs {
		if s != nil && (s.c != c || s.merge != nil) {
			return errors.New("wsfan: UnsubscribeEach: a subscription of another client")
		}
	}
	return c.unsubscribeOn(ctx, nil, subs, nil)
}

// unsubscribeOn is unsubscribe of subs on a given connection: the one
// being restored, or the live one when cn is nil (then the request's
// credits are waited for first, as a subscribe's).
func (c *Client) unsubscribeOn(ctx context.Context, cn *conn, subs []*Subscription, reason error) error {
	c.handoverMu.RLock() // no switch of connection while it runs (handover.go)
	defer c.handoverMu.RUnlock()
	prepaid := 0
	if cn == nil && c.cfg.pace.UnsubscribeCharged() {
		if err := paceErr(ctx, c.cfg.pace.WaitUnsubscribe(ctx, c.ctx)); err != nil {
			return fmt.Errorf("failed to unsubscribe: %w", err)
		}
		prepaid = 1
	}
	c.mu.Lock()
	var orphans []*topicState
	var leaving []*Subscription
	known := 0 // of subs, those still held
	for _, s := range subs {
		if s == nil {
			continue
		}
		if _, ok := c.subs[s]; ok {
			delete(c.subs, s)
			orphans = append(orphans, c.detachLocked(s)...)
			known++
		}
		leaving = append(leaving, s)
	}
	var ops []*subscribeOp
	var err error
	if cn == nil {
		cn = c.conn.Load()
	}
	if cn != nil && len(orphans) > 0 {
		ops, err = c.sendUnsubscribeLocked(cn, orphans, &opRound{prepaid: prepaid})
	} else if prepaid > 0 {
		c.cfg.pace.RefundUnsubscribe()
	}
	c.mu.Unlock()
	for _, s := range leaving {
		s.end(reason)
	}
	if known == 0 && len(subs) == 1 {
		return ErrUnsubscribed
	}
	if err != nil {
		if errors.Is(err, ErrConnectionLost) {
			return nil // the server forgot the connection's subscriptions anyway
		}
		return fmt.Errorf("failed to unsubscribe: %w", err)
	}
	return c.awaitUnsubscribe(ctx, cn, ops)
}

// awaitUnsubscribe waits for the server to acknowledge ops. A connection
// lost meanwhile is not an error: the server forgets its subscriptions.
func (c *Client) awaitUnsubscribe(ctx context.Context, cn *conn, ops []*subscribeOp) error {
	if len(ops) == 0 {
		return nil
	}
	ctx, cancel := c.withTimeout(ctx)
	defer cancel()
	c.awaitOps(ctx, cn, ops)
	for _, op := range ops {
		if op.err != nil && !errors.Is(op.err, ErrConnectionLost) && !errors.Is(op.err, ErrClosed) {
			return fmt.Errorf("failed to unsubscribe: %w", op.err)
		}
	}
	return nil
}

// detachLocked removes s from its topics and returns the confirmed topics
// left with no subscription, which are removed from the table. Called with
// c.mu held.
func (c *Client) detachLocked(s *Subscription) []*topicState {
	var orphans []*topicState
	for _, ts := range s.states {
		if ts.detach(s) > 0 || ts.removed {
			continue
		}
		ts.removed = true
		c.topics.remove(ts)
		if ts.confirmed {
			orphans = append(orphans, ts)
		}
	}
	s.states = nil
	return orphans
}

// sendUnsubscribeLocked encodes unsubscribe requests for states into r,
// registers their ids and queues the frames. Called with c.mu held.
func (c *Client) sendUnsubscribeLocked(cn *conn, states []*topicState, r *opRound) ([]*subscribeOp, error) {
	return r.send(c, cn, states, false)
}

// detachAsync unsubscribes s off the reader goroutine (the reader never
// takes c.mu). Used when the overflow policy ends a subscription.
func (c *Client) detachAsync(s *Subscription) {
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		_ = c.unsubscribe(c.ctx, s, nil)
	}()
}
