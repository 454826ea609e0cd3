package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"go.uber.org/zap"
)

// An Ethereum node's subscriptions do not replay: the heads it made while
// the client was reconnecting never arrive on the new subscription. For a
// Backfill topic (protocol.Recoverer: newHeads) the supervisor fetches
// them on the new connection, before handing it out, and delivers them in
// order, flagged FlagBackfilled, before the live ones: while it does, the
// reader holds the topic's live messages (pass), and releases them after,
// without the ones the backfill delivered already (the seam). Beyond
// WithBackfill's bound, or when the fetch fails, nothing is fetched and
// the first live message is flagged FlagGap, the missed range logged.

// defaultBackfill is WithBackfill's default: about 50 minutes of
// Ethereum mainnet heads.
const defaultBackfill = 256

// WithBackfill bounds how far back the client fetches what a Backfill
// topic missed during a reconnect, in the venue's unit (blocks: an
// Ethereum node's newHeads and logs); a longer hole is flagged FlagGap on
// the first live message instead, the missed range logged. 0 turns the
// backfill off. Default: 256.
func WithBackfill(most int) Option {
	return clientOption(func(c *config) { c.backfill = max(most, 0) })
}

// pass is the reader's check of a Backfill topic's message: while the
// topic is held it waits in held and pass reports false; else pass
// records its place (and its link in the chain) and reports true.
func (c *Client) pass(ts *topicState, msg *Message) bool {
	if ts.holding.Load() {
		ts.holdMu.Lock()
		if ts.holding.Load() {
			ts.held = append(ts.held, *msg)
			ts.holdMu.Unlock()
			return false
		}
		ts.holdMu.Unlock()
	}
	c.place(ts, msg)
	return true
}

// place records msg's place in ts, and for a chain (heads) its link,
// flagging a reorg: one scan of the message for both.
func (c *Client) place(ts *topicState, msg *Message) {
	if c.venue.Messages != nil && !ts.topic.Retracts {
		if number, ok := c.followChain(ts, msg); ok {
			ts.lastPos.Store(number)
			return
		}
	}
	if c.venue.Recoverer == nil {
		return
	}
	if pos, ok := c.venue.Recoverer.Position(ts.topic, msg.Data); ok {
		ts.lastPos.Store(pos)
	}
}

// passHeld is pass for a message the supervisor delivers (fetched or
// held): its place and link, then its delivery.
func (c *Client) passHeld(ts *topicState, m Message) {
	c.place(ts, &m)
	c.deliverHeld(ts, m)
}

// holdBackfill holds the live messages of every confirmed Backfill topic
// with a known place, before a restore subscribes them again, and
// returns them.
func (c *Client) holdBackfill() []*topicState {
	if c.venue.Recoverer == nil || c.cfg.backfill == 0 {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var held []*topicState
	for _, ts := range c.topics.all() {
		if ts.topic.Backfill && ts.confirmed && ts.lastPos.Load() > 0 {
			ts.holding.Store(true)
			held = append(held, ts)
		}
	}
	return held
}

// backfill fetches and delivers what each held topic missed, then
// releases its live messages, and sets the starting place of every
// Backfill topic that has none yet (baseline). Runs on the supervisor,
// during connect.
func (c *Client) backfill(ctx context.Context, topics []*topicState) {
	if c.venue.Recoverer == nil || c.cfg.backfill == 0 || len(topics) == 0 && len(c.unplaced()) == 0 {
		return
	}
	bf := c.venue.Recoverer
	cur := bf.Current()
	res, err := c.CallRaw(ctx, cur.Method, cur.Params)
	for _, ts := range topics {
		current, perr := c.currentOf(ts, res, err)
		last := ts.lastPos.Load()
		switch {
		case perr != nil:
			c.log.Warn("could not backfill: the first live message is flagged as a gap", zap.String("topic", ts.name), zap.Error(perr))
			c.release(ts, nil, true)
		case current <= last:
			c.release(ts, nil, false)
		default:
			msgs, ferr := c.fetchMissed(ctx, ts, last, current)
			if ferr != nil {
				c.log.Warn("could not backfill: the first live message is flagged as a gap", zap.String("topic", ts.name),
					zap.Uint64("after", last), zap.Uint64("through", current), zap.Error(ferr))
			}
			c.release(ts, msgs, ferr != nil)
		}
	}
	if err == nil {
		c.baseline(res)
	}
}

// currentOf reads the current position of ts from the Current call's
// result (or its error).
func (c *Client) currentOf(ts *topicState, res []byte, err error) (uint64, error) {
	if err != nil {
		return 0, err
	}
	return c.venue.Recoverer.ParseCurrent(ts.topic, res)
}

// unplaced lists the sparse Backfill topics (Retracts: logs, which may
// deliver nothing for long) that have no place yet. A dense one (heads)
// gets its place from its first message.
func (c *Client) unplaced() []*topicState {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*topicState
	for _, ts := range c.topics.all() {
		if ts.topic.Backfill && ts.topic.Retracts && ts.lastPos.Load() == 0 {
			out = append(out, ts)
		}
	}
	return out
}

// baseline sets the place of every sparse Backfill topic that has none
// (it has delivered nothing yet) to the current one: a later outage is
// then backfilled from there. Anything before it the subscription never
// owed.
func (c *Client) baseline(current []byte) {
	for _, ts := range c.unplaced() {
		if pos, err := c.venue.Recoverer.ParseCurrent(ts.topic, current); err == nil {
			ts.lastPos.CompareAndSwap(0, pos)
		}
	}
}

// baselineFresh sets the place of the sparse Backfill topics a Subscribe
// just opened, with one Current call: only a Subscribe of such a topic
// (an Ethereum logs filter) pays it.
func (c *Client) baselineFresh(ctx context.Context, states []*topicState) {
	if c.venue.Recoverer == nil || c.cfg.backfill == 0 ||
		!slices.ContainsFunc(states, func(ts *topicState) bool { return ts.topic.Backfill && ts.topic.Retracts }) {
		return
	}
	cur := c.venue.Recoverer.Current()
	if res, err := c.CallRaw(ctx, cur.Method, cur.Params); err == nil {
		c.baseline(res)
	}
}

// fetchMissed fetches the messages of ts after position after through
// through, in order, flagged FlagBackfilled, the first also
// FlagReconnected. A range longer than WithBackfill's bound is an error.
func (c *Client) fetchMissed(ctx context.Context, ts *topicState, after, through uint64) ([]Message, error) {
	data, err := c.fetchRange(ctx, ts, after, through, 0)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	msgs := make([]Message, len(data))
	for i, d := range data {
		msgs[i] = Message{Topic: ts.name, Data: d, Flags: FlagBackfilled, RecvTime: now}
	}
	if len(msgs) > 0 {
		msgs[0].Flags |= FlagReconnected
	}
	c.log.Info("backfilled", zap.String("topic", ts.name), zap.Uint64("after", after), zap.Uint64("through", through), zap.Int("messages", len(msgs)))
	return msgs, nil
}

// maxSplits bounds how often a refused range is halved: 2^16 parts.
const maxSplits = 16

// fetchRange fetches the messages after position after through through.
// A range the server refuses for the size of its answer (protocol
// ErrorClass.RangeTooLarge) is fetched as its two halves.
func (c *Client) fetchRange(ctx context.Context, ts *topicState, after, through uint64, splits int) ([][]byte, error) {
	bf := c.venue.Recoverer
	if d := bf.Distance(ts.topic, after, through); d > uint64(c.cfg.backfill) {
		return nil, fmt.Errorf("missed %d blocks, more than the backfill bound of %d (WithBackfill)", d, c.cfg.backfill)
	}
	calls := bf.Fetch(ts.topic, after, through)
	raws := make([]json.RawMessage, len(calls))
	batch := make([]BatchElem, len(calls))
	for i, call := range calls {
		batch[i] = BatchElem{Method: call.Method, Params: json.RawMessage(call.Params), Result: &raws[i]}
	}
	if err := c.BatchCall(ctx, batch); err != nil {
		return nil, err
	}
	results := make([][]byte, len(raws))
	for i := range batch {
		var rpcErr *RPCError
		if err := batch[i].Error; err != nil {
			if errors.As(err, &rpcErr) && c.classifyError(rpcErr.Code, rpcErr.Message).RangeTooLarge && through-after > 1 && splits < maxSplits {
				mid := after + (through-after)/2
				first, err := c.fetchRange(ctx, ts, after, mid, splits+1)
				if err != nil {
					return nil, err
				}
				second, err := c.fetchRange(ctx, ts, mid, through, splits+1)
				return append(first, second...), err
			}
			return nil, err
		}
		results[i] = raws[i]
	}
	return bf.Messages(ts.topic, after, through, results)
}

// release delivers the fetched messages, then the held live ones but
// those the fetch delivered already, and lets the reader deliver again.
// With gap, the first live message is flagged FlagGap; after fetched
// ones, no live one is flagged FlagReconnected (the hole is filled),
// whether it came while they were fetched or after.
func (c *Client) release(ts *topicState, fetched []Message, gap bool) {
	if len(fetched) > 0 {
		ts.resumed.Store(false) // the first fetched one carries the mark
	}
	var seam uint64
	for _, m := range fetched {
		c.passHeld(ts, m)
		if pos, ok := c.venue.Recoverer.Position(ts.topic, m.Data); ok {
			seam = pos
			ts.lastPos.Store(pos)
		}
	}
	for first := true; ; {
		ts.holdMu.Lock()
		held := ts.held
		ts.held = nil
		if len(held) == 0 {
			ts.holding.Store(false)
			ts.holdMu.Unlock()
			return
		}
		ts.holdMu.Unlock()
		for _, m := range held {
			pos, ok := c.venue.Recoverer.Position(ts.topic, m.Data)
			if ok && pos <= seam {
				continue // the fetch delivered it
			}
			if len(fetched) > 0 {
				m.Flags &^= FlagReconnected
			}
			if gap && first {
				m.Flags |= FlagGap
			}
			first = false
			c.passHeld(ts, m)
			if ok {
				ts.lastPos.Store(pos)
			}
		}
	}
}

// deliverHeld hands m to ts's subscriptions.
func (c *Client) deliverHeld(ts *topicState, m Message) {
	if subs := ts.subs.Load(); subs != nil {
		deliverAll(c, subs, m)
	}
}
