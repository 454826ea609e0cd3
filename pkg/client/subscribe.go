package client

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/wsfan/wsfan/internal/format"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// Subscribe subscribes to topics and returns once the server has
// acknowledged every one of them (Ethereal: answered, or taken as
// accepted for its silence, see protocol.Venue.AcceptAfter). New topics go out in one batched
// request; topics another subscription already holds are shared, and each
// subscription gets every message. A refused topic fails the whole call
// with a *RefusedError naming it. While the client reconnects, Subscribe
// waits for the connection within ctx (and the request timeout). opts set this subscription's buffer,
// overflow policy and pending-byte limit (Buffer, Overflow, PendingBytes);
// without them it takes the client's defaults.
func (c *Client) Subscribe(ctx context.Context, topics []string, opts ...SubscribeOption) (*Subscription, error) {
	names, parsed, err := c.parseTopics(topics)
	if err != nil {
		return nil, err
	}
	subs, errs, err := c.subscribeGroups(ctx, [][]string{names}, [][]*protocol.Topic{parsed}, opts)
	if err != nil {
		return nil, err
	}
	return subs[0], errs[0]
}

// SubscribeEach subscribes every topic as a subscription of its own, all
// in one round of requests (as few as the exchange's limits allow): what a
// fan-out server needs, one subscription a topic that ends alone, without
// a request a topic. subs[i] is topics[i]'s subscription, or nil with
// errs[i] saying why (a *RefusedError for a topic the server refused);
// err is for the whole call (no topic, an invalid one, no connection in
// time, the client closed).
func (c *Client) SubscribeEach(ctx context.Context, topics []string, opts ...SubscribeOption) (subs []*Subscription, errs []error, err error) {
	if len(topics) == 0 {
		return nil, nil, errors.New("wsfan: SubscribeEach needs at least one topic")
	}
	groups := make([][]string, len(topics))
	parsed := make([][]*protocol.Topic, len(topics))
	for i, name := range topics {
		t, err := c.newTopic(name)
		if err != nil {
			return nil, nil, fmt.Errorf("failed to subscribe: %w", err)
		}
		groups[i], parsed[i] = []string{name}, []*protocol.Topic{t}
	}
	return c.subscribeGroups(ctx, groups, parsed, opts)
}

// SubscribeEachTopic is SubscribeEach for topics parsed already, by this
// client's dialect (protocol.Protocol.NewTopic, ParseTopics): nothing is
// parsed again. A topic this client cannot be served (another service's
// path, a login it lacks: see newTopic) is refused alone, errs[i] a
// *RefusedError. No topic is no request and no error.
func (c *Client) SubscribeEachTopic(ctx context.Context, topics []*protocol.Topic, opts ...SubscribeOption) (subs []*Subscription, errs []error, err error) {
	groups := make([][]string, 0, len(topics))
	parsed := make([][]*protocol.Topic, 0, len(topics))
	at := make([]int, 0, len(topics))
	var refused []error // errs, made at the first refusal
	for i, t := range topics {
		if err := c.checkTopic(t); err != nil {
			if refused == nil {
				refused = make([]error, len(topics))
			}
			refused[i] = &RefusedError{Topics: []string{t.Name}, Cause: err}
			continue
		}
		groups, parsed, at = append(groups, []string{t.Name}), append(parsed, []*protocol.Topic{t}), append(at, i)
	}
	if refused == nil && len(groups) > 0 {
		return c.subscribeGroups(ctx, groups, parsed, opts) // each topic's answer in its place
	}
	subs, errs = make([]*Subscription, len(topics)), refused
	if errs == nil {
		errs = make([]error, len(topics))
	}
	if len(groups) == 0 {
		return subs, errs, nil
	}
	gsubs, gerrs, err := c.subscribeGroups(ctx, groups, parsed, opts)
	if err != nil {
		return nil, nil, err
	}
	for j, i := range at {
		subs[i], errs[i] = gsubs[j], gerrs[j]
	}
	return subs, errs, nil
}

// subscribeCall is what one call of the subscribe primitive
// (subscribeGroups) makes and sends: a subscription each group of
// topics, their errors, the new topics and the requests. Owned by the
// calling goroutine; the topic states it lists are the table's, read and
// written under c.mu.
type subscribeCall struct {
	subs []*Subscription
	errs []error

	// Filled in by admitLocked and send.
	fresh  []*topicState  // new to the table: this call subscribes them
	joined []*topicState  // another call is subscribing them
	ops    []*subscribeOp // the requests send sent
}

// subscribeTally is a call's groups of topics and what it learns of
// them, handed to each step by value: its slices and map are written in
// place and never kept, so they stay on subscribeGroups' stack when
// small (a sidecar's one-topic subscribe allocates none of them).
type subscribeTally struct {
	groups [][]string // names distinct within a group
	parsed [][]*protocol.Topic
	all    []string        // every topic of the call, for an error
	states [][]*topicState // each group's topics (admitLocked)
	// outcome holds every topic of the call: nil for one held and
	// confirmed already, else filled in by settle. Read after c.mu is
	// let go, it stands for the subscriptions' states, which a closing
	// client may clear meanwhile.
	outcome map[*topicState]error
}

// subscribeGroups is the client's one subscribe: it makes one
// subscription of each group of topics (names distinct within a group),
// their new topics subscribed in one round, in three steps: admit (a
// connection and the request's credit, or the queue while there is none;
// then, under c.mu, the clash check and the topic table), send, settle.
// A subscription with a refused or failed topic ends, and its error is
// in errs; err is for the whole call. Subscribe, SubscribeEach,
// SubscribeEachTopic and SubscribeTopics are its wrappers.
func (c *Client) subscribeGroups(ctx context.Context, groups [][]string, parsed [][]*protocol.Topic, opts []SubscribeOption) ([]*Subscription, []error, error) {
	c.handoverMu.RLock() // no switch of connection while it runs (handover.go)
	defer c.handoverMu.RUnlock()
	ctx, cancel := c.withTimeout(ctx)
	defer cancel()
	// The call and its tally stay on this frame where they can: the
	// steps keep no pointer to either.
	all := allTopics(groups)
	call := subscribeCall{subs: make([]*Subscription, len(groups)), errs: make([]error, len(groups))}
	tally := subscribeTally{groups: groups, parsed: parsed, all: all,
		states: make([][]*topicState, len(groups)), outcome: make(map[*topicState]error, len(all))}
	cfg := c.subscribeConfig(opts)
	for i, names := range groups {
		call.subs[i] = newSubscription(c, names, cfg, channelSlots)
	}
	cn, queued, err := c.admitConn(ctx, &call, tally)
	switch {
	case queued:
		return call.subs, call.errs, nil
	case err != nil:
		return nil, nil, err
	}
	if err := c.send(ctx, cn, &call, tally); err != nil {
		return nil, nil, err
	}
	c.settle(ctx, cn, &call, tally)
	c.judge(ctx, &call, tally)
	return call.subs, call.errs, nil
}

// admitConn is the first step of admission: the live connection (waiting
// for one while the client reconnects, as a call waits for its answer,
// within ctx and the request timeout) and the request budget's first
// credit (a round whose topics are all held already gives it back).
// With WithRetryOnFailedConnect and no connection handed out, the call's
// subscriptions are queued instead (queue) and queued is true.
func (c *Client) admitConn(ctx context.Context, call *subscribeCall, tally subscribeTally) (cn *conn, queued bool, err error) {
	cn, err = c.activeConn(ctx)
	if err != nil && c.cfg.retryFirst && c.queue(call.subs, tally.parsed, call.errs) {
		return nil, true, nil
	}
	if err != nil {
		// Reconnecting (or the first connection was handed out
		// meanwhile).
		cn, err = c.awaitConn(ctx)
	}
	if err != nil {
		return nil, false, fmt.Errorf("failed to subscribe %s: %w", format.QuotedList(tally.all), err)
	}
	if err := paceErr(ctx, c.cfg.pace.WaitSubscribe(ctx, c.ctx)); err != nil {
		return nil, false, fmt.Errorf("failed to subscribe %s: %w", format.QuotedList(tally.all), err)
	}
	return cn, false, nil
}

// send admits call's groups into the topic table (admitLocked) and sends
// its new topics in the rounds the budget holds
// (sendSubscribeRoundsLocked), all under c.mu, so the server sees the
// requests in table order. When nothing could be sent, every
// subscription of the call is let go and the error returned.
func (c *Client) send(ctx context.Context, cn *conn, call *subscribeCall, tally subscribeTally) error {
	c.mu.Lock()
	if c.closed() {
		c.mu.Unlock()
		c.cfg.pace.RefundSubscribe()
		return ErrClosed
	}
	c.admitLocked(call, tally)
	var err error
	if len(call.fresh) > 0 {
		call.ops, err = c.sendSubscribeRoundsLocked(ctx, cn, call.fresh)
	}
	if len(call.fresh) == 0 || err != nil {
		c.cfg.pace.RefundSubscribe()
	}
	if err != nil {
		for _, ts := range call.fresh {
			ts.err = err
			close(ts.ready)
		}
	}
	c.mu.Unlock()
	if err != nil {
		for _, s := range call.subs {
			if s != nil {
				_ = c.unsubscribe(ctx, s, nil)
			}
		}
		return fmt.Errorf("failed to subscribe %s: %w", format.QuotedList(tally.all), err)
	}
	return nil
}

// admitLocked is admission's second step: it refuses a group one of
// whose topics routes like another (clashesLocked, once a topic), and
// attaches each other group's subscription to its topics, adding those
// the table lacks (call.fresh); topics another call is subscribing are
// call.joined. Called with c.mu held.
func (c *Client) admitLocked(call *subscribeCall, tally subscribeTally) {
	named := make(map[string]string) // see clashesLocked
	for g, names := range tally.groups {
		if err := c.clashesLocked(names, tally.parsed[g], named); err != nil {
			call.errs[g], call.subs[g] = err, nil // refused alone, before anything is sent
			continue
		}
		s := call.subs[g]
		for i, name := range names {
			ts := c.topics.get(name)
			_, seen := tally.outcome[ts]
			switch {
			case ts == nil:
				ts = c.openTopic(tally.parsed[g][i])
				c.topics.add(ts)
				call.fresh = append(call.fresh, ts)
			case !ts.confirmed && !seen:
				call.joined = append(call.joined, ts)
			}
			tally.outcome[ts] = nil
			ts.attach(s)
			s.states = append(s.states, ts)
			tally.states[g] = append(tally.states[g], ts)
		}
		c.subs[s] = struct{}{}
	}
}

// settle waits for the answers to call's requests (a throttled one
// asked again: retryForNow), confirms the topics they accepted
// (settleLocked) and records every topic's outcome: its own answer's,
// or for a joined topic the outcome of the call subscribing it.
func (c *Client) settle(ctx context.Context, cn *conn, call *subscribeCall, tally subscribeTally) {
	c.awaitOps(ctx, cn, call.ops)
	ops := c.retryForNow(ctx, cn, call.ops)

	c.mu.Lock()
	_, failed := c.settleLocked(cn, ops)
	for _, ts := range call.fresh {
		if ts.err == nil && !ts.confirmed {
			ts.err = failed
		}
		tally.outcome[ts] = ts.err
		close(ts.ready)
	}
	c.mu.Unlock()
	c.baselineFresh(ctx, call.fresh)

	// Topics another call is subscribing: their outcome is that call's.
	for _, ts := range call.joined {
		select {
		case <-ts.ready:
			tally.outcome[ts] = ts.err
		case <-ctx.Done():
			tally.outcome[ts] = ctxError(ctx, "subscribe")
		}
	}
}

// judge lets each subscription of call stand or fall with its own
// topics: one with a refused topic ends with a *RefusedError naming
// them, one with a failed topic with that failure, in call.errs.
func (c *Client) judge(ctx context.Context, call *subscribeCall, tally subscribeTally) {
	for g, s := range call.subs {
		if s == nil {
			continue // refused already (clashesLocked)
		}
		var refused []*topicState
		var other error
		for _, ts := range tally.states[g] {
			terr := tally.outcome[ts]
			var re *RefusedError
			switch {
			case errors.As(terr, &re):
				refused = append(refused, ts)
			case terr != nil && other == nil:
				other = terr
			}
		}
		switch {
		case len(refused) > 0:
			call.errs[g] = refusedError(refused)
		case other != nil:
			call.errs[g] = fmt.Errorf("failed to subscribe %s: %w", format.QuotedList(tally.groups[g]), other)
		default:
			continue
		}
		_ = c.unsubscribe(context.WithoutCancel(ctx), s, nil)
		call.subs[g] = nil
	}
}

// allTopics lists the topics of groups, for an error.
func allTopics(groups [][]string) []string {
	if len(groups) == 1 {
		return groups[0]
	}
	var all []string
	for _, g := range groups {
		all = append(all, g...)
	}
	return all
}

// queue registers subs while no connection is handed out, before the
// first one or during a reconnect (WithRetryOnFailedConnect): their new
// topics are marked queued, and the next connection's restore subscribes
// them on the server. A topic queued during a reconnect has its first
// message flagged FlagReconnected: it was asked for while the server was
// out of reach. A subscription whose topics clash (clashesLocked) is
// refused instead: subs[g] nil, errs[g] why. It reports false while a
// connection is handed out, when the caller must use it instead.
func (c *Client) queue(subs []*Subscription, parsed [][]*protocol.Topic, errs []error) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.conn.Load() != nil || c.closed() {
		return false
	}
	named := make(map[string]string)
	for g, s := range subs {
		if err := c.clashesLocked(s.topics, parsed[g], named); err != nil {
			errs[g], subs[g] = err, nil
			continue
		}
		for i, name := range s.topics {
			ts := c.topics.get(name)
			if ts == nil {
				ts = c.openTopic(parsed[g][i])
				ts.queued = true
				ts.resumed.Store(c.up)
				close(ts.ready)
				c.topics.add(ts)
			}
			ts.attach(s)
			s.states = append(s.states, ts)
		}
		c.subs[s] = struct{}{}
	}
	return true
}

// parseTopics drops duplicates and encodes each topic once.
func (c *Client) parseTopics(topics []string) ([]string, []*protocol.Topic, error) {
	if len(topics) == 0 {
		return nil, nil, errors.New("wsfan: Subscribe needs at least one topic")
	}
	seen := make(map[string]struct{}, len(topics))
	names := make([]string, 0, len(topics))
	parsed := make([]*protocol.Topic, 0, len(topics))
	for _, name := range topics {
		if _, dup := seen[name]; dup {
			continue
		}
		seen[name] = struct{}{}
		t, err := c.newTopic(name)
		if err != nil {
			return nil, nil, fmt.Errorf("failed to subscribe: %w", err)
		}
		names = append(names, name)
		parsed = append(parsed, t)
	}
	return names, parsed, nil
}

// sendSubscribeLocked encodes subscribe requests for states from their
// cached payloads into r, registers every request id, then queues the
// frames to go out in one flush. Called with c.mu held.
func (c *Client) sendSubscribeLocked(cn *conn, states []*topicState, r *opRound) ([]*subscribeOp, error) {
	return r.send(c, cn, states, true)
}

// Resync asks the server for topic's whole state again: it unsubscribes
// and subscribes the topic on the current connection, so the exchange
// sends a fresh snapshot (Deribit and Thalex books, Ethereal's L2Book),
// which arrives flagged FlagSnapshot. Subscriptions keep their channels
// throughout. At most one resync of a topic is in flight; a Resync while
// one is queues one more after it (the snapshot that answers the running
// one may be the one that failed), never more. It reports whether a
// resync is running or queued: false when topic is not subscribed or the
// client is not connected (the restore after the reconnect brings a
// snapshot then). Books (package book) call it on a break; so does the
// client itself after a gap with WithResubscribeOnGap.
func (c *Client) Resync(topic string) bool {
	c.mu.Lock()
	ts := c.topics.get(topic)
	c.mu.Unlock()
	if ts == nil || c.conn.Load() == nil {
		return false
	}
	c.refreshTopic(ts)
	return true
}

// refreshTopic resubscribes a topic so the server sends a fresh
// snapshot: at once when no refresh of it runs, else once more after the
// running one (refreshAgain).
func (c *Client) refreshTopic(ts *topicState) {
	for {
		if ts.refreshing.CompareAndSwap(false, true) {
			c.wg.Add(1)
			go c.refreshLoop(ts)
			return
		}
		ts.refreshAgain.Store(true)
		if ts.refreshing.Load() {
			return // the running refresh sees refreshAgain when it ends
		}
		// It ended between the two loads: start one here.
	}
}

// refreshLoop is a refresh's goroutine: it refreshes ts, then again while
// refreshTopic asked for one more meanwhile.
func (c *Client) refreshLoop(ts *topicState) {
	defer c.wg.Done()
	for {
		if !c.sleep(c.resyncPause(ts, time.Now())) {
			ts.refreshing.Store(false)
			return // closed
		}
		c.refreshOnce(ts)
		ts.refreshing.Store(false)
		if !ts.refreshAgain.Swap(false) || !ts.refreshing.CompareAndSwap(false, true) {
			return
		}
	}
}

// refreshOnce unsubscribes and subscribes ts on the current connection
// and waits for the server's answers.
func (c *Client) refreshOnce(ts *topicState) {
	cn := c.conn.Load()
	if cn == nil {
		return
	}
	c.mu.Lock()
	if ts.removed {
		c.mu.Unlock()
		return
	}
	unsubs, err := c.sendUnsubscribeLocked(cn, []*topicState{ts}, new(opRound))
	var subs []*subscribeOp
	if err == nil {
		// Set before the subscribe goes out, so the reader cannot see
		// the fresh snapshot first (checkSequence).
		ts.resubscribed.Store(true)
		subs, err = c.sendSubscribeLocked(cn, []*topicState{ts}, new(opRound))
	}
	c.mu.Unlock()
	if err != nil {
		return
	}
	ctx, cancel := c.withTimeout(c.ctx)
	defer cancel()
	c.awaitOps(ctx, cn, append(unsubs, subs...))
	c.log.Info("resubscribed for a fresh snapshot", zap.String("topic", ts.name))
}

// stateFinder maps a request's topics back to their states. Dialects
// keep the order they were given (Thalex and Deribit move private
// channels after public ones), so a request usually covers a run of the
// states, which is shared rather than copied; a map is built only for
// the rest.
type stateFinder struct {
	all   []*topicState
	next  int
	index map[*protocol.Topic]*topicState
}

func (f *stateFinder) states(topics []*protocol.Topic) []*topicState {
	start := f.next
	run := true
	for i, t := range topics {
		if start+i >= len(f.all) || f.all[start+i].topic != t {
			run = false
			break
		}
	}
	if run {
		f.next += len(topics)
		return f.all[start:f.next:f.next]
	}
	if f.index == nil {
		f.index = make(map[*protocol.Topic]*topicState, len(f.all))
		for _, ts := range f.all {
			f.index[ts.topic] = ts
		}
	}
	out := make([]*topicState, len(topics))
	for i, t := range topics {
		out[i] = f.index[t]
	}
	return out
}

// settleLocked applies the outcome of ops: acknowledged topics take their
// routing key and are confirmed; refused topics are returned with the
// server's reason in ts.err; failed is the first failure other than a
// refusal (timeout, lost connection), whose topics are left unconfirmed.
// Topics removed while their subscribe was in flight are unsubscribed on
// the server again. Called with c.mu held.
func (c *Client) settleLocked(cn *conn, ops []*subscribeOp) (refused []*topicState, failed error) {
	var undo []*topicState
	for _, op := range ops {
		var rpcErr *RPCError
		refusedAll := errors.As(op.err, &rpcErr)
		if op.err != nil && !refusedAll && failed == nil {
			failed = op.err
		}
		for j, ts := range op.states {
			var key string
			if op.err == nil {
				key = op.keys[j]
			}
			switch {
			case ts.removed:
				if op.err == nil && key != "" {
					ts.key = key
					undo = append(undo, ts)
				}
			case op.err == nil && key != "":
				ts.key = key
				ts.confirmed = true
				ts.queued = false
			case op.err == nil || refusedAll:
				ts.queued = false
				re := &RefusedError{Topics: []string{ts.name}}
				switch {
				case rpcErr != nil:
					re.Cause = rpcErr
				case op.refusals != nil && op.refusals[j] != nil: // refused by a frame of its own
					re.Cause = op.refusals[j]
				}
				ts.err = re
				refused = append(refused, ts)
			}
		}
	}
	if len(undo) > 0 {
		_, _ = c.sendUnsubscribeLocked(cn, undo, new(opRound))
		for _, ts := range undo {
			c.topics.unroute(ts)
		}
	}
	return refused, failed
}

// refusedError names every refused topic, with the server's reason when
// they share one.
func refusedError(states []*topicState) error {
	e := &RefusedError{}
	for _, ts := range states {
		e.Topics = append(e.Topics, ts.name)
		var re *RefusedError
		if e.Cause == nil && errors.As(ts.err, &re) && re.Cause != nil {
			e.Cause = re.Cause
		}
	}
	return e
}

// ctxError turns a finished context into the error a call reports.
func ctxError(ctx context.Context, what string) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("%w: %s: %w", ErrTimeout, what, ctx.Err())
	}
	return ctx.Err()
}
