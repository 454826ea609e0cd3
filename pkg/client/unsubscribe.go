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
	return c.unsubscribeOn(ctx, nil, s, reason)
}

// unsubscribeOn is unsubscribe on a given connection: the one being
// restored, or the live one when cn is nil.
func (c *Client) unsubscribeOn(ctx context.Context, cn *conn, s *Subscription, reason error) error {
	c.mu.Lock()
	if _, ok := c.subs[s]; !ok {
		c.mu.Unlock()
		s.end(reason)
		return ErrUnsubscribed
	}
	delete(c.subs, s)
	orphans := c.detachLocked(s)
	var ops []*subscribeOp
	var err error
	if cn == nil {
		cn = c.conn.Load()
	}
	if cn != nil && len(orphans) > 0 {
		ops, err = c.sendUnsubscribeLocked(cn, orphans, new(opRound))
	}
	c.mu.Unlock()
	s.end(reason)
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
