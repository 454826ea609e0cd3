package client

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cenkalti/backoff/v4"
	"go.uber.org/zap"

	"github.com/wsfan/wsfan/internal/endpoints"
	"github.com/wsfan/wsfan/internal/recovery"
)

// connectingKey marks the context of the handshake and the on-connect
// hook: calls made with it use the connection being set up.
type connectingKey struct{}

// connect dials a connection and makes it ready: the dialect's handshake
// calls, the on-connect hook, the program's session settings, then every
// confirmed topic restored in one batch. On any failure the connection is closed and the error returned.
func (c *Client) connect(ctx context.Context, restoring bool) (*conn, error) {
	cn, err := c.dial(ctx)
	if err != nil {
		return nil, err
	}
	abort := func(err error) (*conn, error) {
		cn.fail(err)
		cn.wait()
		return nil, err
	}

	// Until the topics are restored the connection is not handed out:
	// only the hook's own calls (through ctx) may use it, so a Subscribe
	// made meanwhile cannot overtake the hook's login.
	ctx, cancel := c.withTimeout(context.WithValue(ctx, connectingKey{}, cn))
	defer cancel()
	if err := c.prepare(ctx, cn); err != nil {
		if !restoring || !errors.Is(err, ErrLoginRefused) {
			return abort(err)
		}
		// Retrying would be refused again: serve what needs no login.
		c.endPrivate(err)
		if err := c.replaySettings(ctx, cn); err != nil {
			return abort(err)
		}
	}
	var backfilling []*recovery.Topic[Message]
	if restoring {
		backfilling = c.holdRecovering()
	}
	restored, err := c.restore(ctx, cn, &c.restoreRound, false)
	if err != nil {
		c.recovery.Let(backfilling) // the next connection holds them again
		return abort(err)
	}
	c.recovery.Recover(ctx, backfilling)
	// Topics queued by Subscribe before the first connection while the
	// restore ran go out in rounds of their own (only they: the others
	// are subscribed on cn already, and a second Ethereum subscription
	// would deliver every notification twice); the connection is handed
	// out under mu once none is left, so none is missed.
	for {
		c.mu.Lock()
		if !c.queuedLocked() {
			c.up = true
			c.conn.Store(cn)
			c.connSet.notify()
			c.mu.Unlock()
			break
		}
		c.mu.Unlock()
		n, err := c.restore(ctx, cn, new(opRound), true)
		if err != nil {
			return abort(err)
		}
		restored += n
	}
	c.setState(StateConnected)
	ep, shown := c.eps.InUse()
	c.log.Info("connected", zap.String("endpoint", ep.Shown), zap.Int("topics", restored))
	c.emit(Event{Kind: Connected, Endpoint: shown})
	if restoring {
		c.emit(Event{Kind: Resubscribed, Topics: restored})
	}
	return cn, nil
}

// prepare makes cn ready for topics, before it is handed out: the
// dialect's handshake calls, the on-connect hook (its login) and the
// program's session settings, through a ctx that makes the hook's calls
// use cn. A refused login comes back wrapping ErrLoginRefused, before
// the settings are made.
func (c *Client) prepare(ctx context.Context, cn *conn) error {
	ctx = context.WithValue(ctx, connectingKey{}, cn)
	for _, call := range c.proto.Handshake() {
		if _, err := cn.call(ctx, call.Method, call.Params); err != nil {
			return fmt.Errorf("handshake %s: %w", call.Method, err)
		}
	}
	if c.cfg.onConnect != nil {
		if err := c.cfg.onConnect(ctx, c); err != nil {
			return fmt.Errorf("on-connect hook: %w", err)
		}
	}
	return c.replaySettings(ctx, cn)
}

// endPrivate ends every subscription holding a private topic with
// reason, after a refused login. Nothing goes to the server: the new
// connection has not subscribed them, and the restore that follows skips
// the topics they alone held.
func (c *Client) endPrivate(reason error) {
	c.mu.Lock()
	var ended []*Subscription
	for s := range c.subs {
		for _, ts := range s.states {
			if ts.topic.Private {
				ended = append(ended, s)
				break
			}
		}
	}
	for _, s := range ended {
		delete(c.subs, s)
		c.detachLocked(s)
	}
	c.mu.Unlock()
	c.log.Error("login refused: subscriptions with private topics end, public topics are restored",
		zap.Int("subscriptions", len(ended)), zap.Error(reason))
	for _, s := range ended {
		s.end(reason)
	}
}

// restore resubscribes every confirmed topic from its cached payload,
// with the topics queued before the first connection, in one batch
// (chunked by WithResubscribeChunk); queuedOnly restores the queued ones
// alone. It works in r (see queueRestore). A topic the server now refuses
// ends the subscriptions holding it with a *RefusedError.
//
// Under a venue's subscription budget (protocol.Venue.Limits, WithRateLimit)
// the batch is what the budget holds at once: a restore needing more
// requests goes out in rounds, each waiting for its credits, as Deribit
// ends the session of a connection whose requests find none left. Within
// the budget (Deribit: 9 requests, 2,250 channels) it is one write.
func (c *Client) restore(ctx context.Context, cn *conn, r *opRound, queuedOnly bool) (int, error) {
	var done map[*topicState]bool // the topics of the rounds so far, when there may be several
	if c.cfg.pace.RoundRequests() > 0 {
		done = make(map[*topicState]bool)
	}
	total := 0
	for round := 0; ; round++ {
		if round > 0 {
			r = new(opRound) // the writer may still hold the last round's frames
		}
		n, more, err := c.restoreOnce(ctx, cn, r, queuedOnly, done)
		total += n
		if err != nil || !more {
			return total, err
		}
		c.log.Info("restore paced by the subscription budget", zap.Int("topics", total))
	}
}

// restoreOnce is one round of restore: the topics not done yet, as many
// as the budget allows at once (more reports that some are left).
func (c *Client) restoreOnce(ctx context.Context, cn *conn, r *opRound, queuedOnly bool, done map[*topicState]bool) (n int, more bool, err error) {
	// Every return below comes after the ops are answered (or were never
	// registered).
	defer r.release()
	states, more, ops, err := c.queueRestore(ctx, cn, r, queuedOnly, done)
	if err != nil || len(states) == 0 {
		return 0, false, err
	}
	c.awaitOps(ctx, cn, ops)
	ops = c.retryForNow(ctx, cn, ops)

	c.mu.Lock()
	refused, failed := c.settleLocked(cn, ops)
	// End each subscription once, naming the refused topics it held.
	ended := make(map[*Subscription][]*topicState)
	for _, ts := range refused {
		ts.confirmed = false
		if subs := ts.subs.Load(); subs != nil {
			for _, s := range *subs {
				ended[s] = append(ended[s], ts)
			}
		}
	}
	c.mu.Unlock()
	if failed != nil {
		return 0, false, fmt.Errorf("resubscribe: %w", failed)
	}
	if len(refused) > 0 {
		names := make([]string, len(refused))
		for i, ts := range refused {
			names[i] = ts.name
		}
		c.log.Error("topics refused on resubscribe", zap.Strings("topics", names))
	}
	for s, theirs := range ended {
		_ = c.unsubscribeOn(ctx, cn, []*Subscription{s}, refusedError(theirs))
	}
	return len(states) - len(refused), more, nil
}

// queueRestore is the in-memory half of a restore round: it collects the
// topics to restore that are not done, and queues their cached subscribe
// payloads as one batch, in r. Under a subscription budget (done is not
// nil) it keeps those the budget holds at once (more: some are left),
// marks them done, and takes the round's credits first, waiting for them
// without c.mu: after a session Deribit ended for want of credits they
// are there only once the supervisor waited for the refill. A
// connection's first restore works in c.restoreRound: the previous
// restore's connection has failed and been waited for (conn.wait) before
// another restore starts, so nothing touches that round any more. Later
// rounds on the same connection take fresh memory, as the writer may
// still hold the first round's frames.
func (c *Client) queueRestore(ctx context.Context, cn *conn, r *opRound, queuedOnly bool, done map[*topicState]bool) ([]*topicState, bool, []*subscribeOp, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	states := c.restorable(r.states[:0], queuedOnly, done)
	more := false
	if done != nil && len(states) > 0 {
		var requests int
		states, requests, more = c.fitBudget(r, states)
		for _, ts := range states {
			done[ts] = true
		}
		var err error
		if states, err = c.awaitRoundLocked(ctx, r, states, requests, 0); err != nil {
			return nil, false, nil, fmt.Errorf("resubscribe: %w", err)
		}
	}
	r.states = states
	if len(states) == 0 {
		r.encoded = false
		return nil, false, nil, nil
	}
	// The topics go out in table order: the server does not care, and
	// sorting 100 names that share long prefixes took more than the rest
	// of the resubscribe together (BenchmarkResubscribe).
	ops, err := c.sendSubscribeLocked(cn, states, r)
	if err != nil {
		return nil, false, nil, fmt.Errorf("resubscribe: %w", err)
	}
	return states, more, ops, nil
}

// restorable appends to dst the topics a restore sends that are not
// done. Called with c.mu held.
func (c *Client) restorable(dst []*topicState, queuedOnly bool, done map[*topicState]bool) []*topicState {
	for _, ts := range c.topics.all() {
		if (ts.queued || (ts.confirmed && !queuedOnly)) && !done[ts] {
			dst = append(dst, ts)
		}
	}
	return dst
}

// supervise is the supervisor goroutine: it waits for the connection to
// fail and replaces it, with backoff, until Close. With cn nil the first
// connection failed with cause (WithRetryOnFailedConnect) and is dialed
// again first.
func (c *Client) supervise(cn *conn, cause error) {
	defer c.wg.Done()
	reason := c.superviseLoop(cn, cause)
	c.finish(reason)
}

func (c *Client) superviseLoop(cn *conn, cause error) error {
	var bo backoff.BackOff
	connectedAt := time.Now()
	for {
		if cn != nil {
			connectedAt = time.Now()
			var stop bool
			if cause, stop = c.awaitLoss(cn); stop {
				return nil
			}
		}
		restoring := cn != nil
		if bo == nil || time.Since(connectedAt) >= c.cfg.healthyAfter {
			bo = c.cfg.backoff()
		}
		failed := c.eps.Current()
		for attempt := 1; ; attempt++ {
			// Round the endpoints from the next one; the backoff waits
			// only once every one has failed in a row (endpoints.go).
			ep, backs := c.eps.Next(failed, attempt)
			if attempt == 1 && errors.Is(cause, errSwitchBack) {
				ep, backs = 0, false // the preferred endpoint, which answers
			}
			var wait time.Duration
			if backs {
				if wait = bo.NextBackOff(); wait == backoff.Stop {
					c.log.Error("giving up reconnecting", zap.Error(cause))
					return fmt.Errorf("%w: gave up reconnecting: %w", ErrConnectionLost, cause)
				}
			}
			if attempt == 1 && errors.Is(cause, ErrServerReconnect) {
				wait = 0
			}
			wait = max(wait, c.refillWait())
			c.eps.Use(ep)
			c.emit(Event{Kind: Reconnecting, Attempt: attempt, Wait: wait, Err: cause, Endpoint: c.eps.Shown(ep)})
			if !c.sleepOrSwap(wait) {
				return nil
			}
			c.setState(StateConnecting)
			next, err := c.connect(c.ctx, restoring)
			if err == nil {
				cn = next
				break
			}
			if c.closed() {
				return nil
			}
			cause = err
			c.lastFailure.Store(&err)
			c.setState(StateReconnecting)
			c.log.Warn("reconnect failed", zap.Int("attempt", attempt), zap.Error(err))
		}
	}
}

// awaitLoss waits for cn to fail, checking meanwhile for stale topics,
// and prepares the restore; stop means Close was called.
func (c *Client) awaitLoss(cn *conn) (cause error, stop bool) {
	c.upSince.Store(time.Now().UnixNano())
	check := time.NewTicker(staleCheckEvery)
	defer check.Stop()
	var probe <-chan time.Time        // the preferred endpoint's, while another is in use (handover.go)
	var answering endpoints.Probation // since when it answered every probe
	// Probing from one endpoint on: SetEndpoints may give more.
	if !c.cfg.leg && c.cfg.probeEvery > 0 {
		t := time.NewTicker(c.cfg.probeEvery)
		defer t.Stop()
		probe = t.C
	}
wait:
	for {
		select {
		case <-cn.done:
			break wait
		case <-c.ctx.Done():
			cn.fail(ErrClosed)
			break wait
		case now := <-check.C:
			c.checkStale(now)
		case now := <-probe:
			if answering.Answered(now, !c.eps.OnPreferred() && c.probe(c.ctx), c.cfg.switchAfter) {
				cn = c.takeBack(cn, SwitchedBack)
				answering.Reset()
			}
		case req := <-c.swaps:
			cn = c.swapEndpoints(cn, req)
			answering.Reset()
		}
	}
	cn.wait()
	c.conn.CompareAndSwap(cn, nil)
	c.lag.Store(0)
	if c.closed() {
		return nil, true
	}
	cause = cn.cause
	c.lastFailure.Store(&cause)
	c.stats.reconnects.Add(1)
	c.setState(StateReconnecting)
	c.log.Warn("connection lost", zap.Error(cause))
	c.emit(Event{Kind: Disconnected, Err: cause})
	c.prepareRestore()
	return cause, false
}

// queuedLocked reports whether a topic queued before the first
// connection is still waiting to be sent. Called with c.mu held.
func (c *Client) queuedLocked() bool {
	for _, ts := range c.topics.all() {
		if ts.queued {
			return true
		}
	}
	return false
}

// prepareRestore resets per-connection topic state while no reader runs:
// server-assigned routing keys are forgotten, change ids start over, and
// every topic's next message is flagged as the first after a reconnect.
func (c *Client) prepareRestore() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, ts := range c.topics.all() {
		c.topics.forgetServerKey(ts)
		ts.lastID = 0
		ts.resumed.Store(true)
		ts.cadence.Restart()
	}
}

// sleep waits d or until Close; false means Close.
func (c *Client) sleep(d time.Duration) bool {
	if d <= 0 {
		return !c.closed()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-c.ctx.Done():
		return false
	}
}

// finish runs when the supervisor stops: every subscription ends (with
// reason when reconnecting gave up, cleanly on Close) and Events closes.
func (c *Client) finish(reason error) {
	c.cancel()
	c.setState(StateClosed)
	c.mu.Lock()
	subs := make([]*Subscription, 0, len(c.subs))
	for s := range c.subs {
		subs = append(subs, s)
		c.detachLocked(s)
	}
	clear(c.subs)
	c.mu.Unlock()
	for _, s := range subs {
		s.end(reason)
	}
	// Events is closed here, as Close promises, so a consumer ranging over
	// it ends. Every reader has exited by now; an emit after this is
	// dropped, not a panic.
	c.closeEvents()
	close(c.done)
	c.log.Info("closed")
}
