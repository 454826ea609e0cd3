package client

import (
	"context"
	"encoding/json"
	"time"

	"go.uber.org/zap"
)

// An Ethereum node's subscriptions do not replay: the heads it made while
// the client was reconnecting never arrive on the new subscription. For a
// Backfill topic (protocol.Backfilling: newHeads) the supervisor fetches
// them on the new connection, before handing it out, and delivers them in
// order, flagged FlagBackfilled, before the live ones: while it does, the
// reader holds the topic's live messages (pass), and releases them after,
// without the ones the backfill delivered already (the seam). Beyond
// WithBackfill's bound, or when the fetch fails, nothing is fetched and
// the first live message is flagged FlagGap, the missed range logged.

// defaultBackfill is WithBackfill's default: about 50 minutes of
// Ethereum mainnet heads.
const defaultBackfill = 256

// WithBackfill bounds how many missed messages of a Backfill topic (an
// Ethereum node's newHeads) the client fetches after a reconnect; a
// larger hole is flagged FlagGap on the first live message instead, the
// missed range logged. 0 turns the backfill off. Default: 256.
func WithBackfill(most int) Option {
	return clientOption(func(c *config) { c.backfill = max(most, 0) })
}

// pass is the reader's check of a Backfill topic's message: while the
// topic is held it waits in held and pass reports false; else pass
// records its place and reports true.
func (c *Client) pass(ts *topicState, msg Message) bool {
	if ts.holding.Load() {
		ts.holdMu.Lock()
		if ts.holding.Load() {
			ts.held = append(ts.held, msg)
			ts.holdMu.Unlock()
			return false
		}
		ts.holdMu.Unlock()
	}
	if c.backfilling == nil {
		return true
	}
	if pos, ok := c.backfilling.Position(msg.Data); ok {
		ts.lastPos.Store(pos)
	}
	return true
}

// passHeld is pass for a message the supervisor delivers (fetched or
// held): its place, and its link in the chain.
func (c *Client) passHeld(ts *topicState, m Message) {
	c.followChain(ts, &m)
	c.deliverHeld(ts, m)
}

// holdBackfill holds the live messages of every confirmed Backfill topic
// with a known place, before a restore subscribes them again, and
// returns them.
func (c *Client) holdBackfill() []*topicState {
	if c.backfilling == nil || c.cfg.backfill == 0 {
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
// releases its live messages. Runs on the supervisor, during connect.
func (c *Client) backfill(ctx context.Context, topics []*topicState) {
	if len(topics) == 0 {
		return
	}
	bf := c.backfilling
	var current uint64
	cur := bf.Current()
	res, err := c.CallRaw(ctx, cur.Method, cur.Params)
	if err == nil {
		current, err = bf.ParseCurrent(res)
	}
	for _, ts := range topics {
		last := ts.lastPos.Load()
		switch {
		case err != nil:
			c.log.Warn("could not backfill: the first live message is flagged as a gap", zap.String("topic", ts.name), zap.Error(err))
			c.release(ts, nil, true)
		case current <= last:
			c.release(ts, nil, false)
		case current-last > uint64(c.cfg.backfill):
			c.log.Warn("missed more than the backfill bound: the first live message is flagged as a gap", zap.String("topic", ts.name),
				zap.Uint64("from", last+1), zap.Uint64("to", current), zap.Int("bound", c.cfg.backfill))
			c.release(ts, nil, true)
		default:
			msgs, ferr := c.fetchMissed(ctx, ts, last+1, current)
			if ferr != nil {
				c.log.Warn("could not backfill: the first live message is flagged as a gap", zap.String("topic", ts.name), zap.Error(ferr))
			}
			c.release(ts, msgs, ferr != nil)
		}
	}
}

// fetchMissed fetches the messages of ts from first to last, in one
// batch, flagged FlagBackfilled, the first also FlagReconnected.
func (c *Client) fetchMissed(ctx context.Context, ts *topicState, first, last uint64) ([]Message, error) {
	bf := c.backfilling
	raws := make([]json.RawMessage, last-first+1)
	batch := make([]BatchElem, len(raws))
	for i := range batch {
		call := bf.Fetch(first + uint64(i))
		batch[i] = BatchElem{Method: call.Method, Params: json.RawMessage(call.Params), Result: &raws[i]}
	}
	if err := c.BatchCall(ctx, batch); err != nil {
		return nil, err
	}
	now := time.Now()
	msgs := make([]Message, 0, len(raws))
	for i := range batch {
		if batch[i].Error != nil {
			return nil, batch[i].Error
		}
		data, ok, err := bf.Message(raws[i])
		if err != nil {
			return nil, err
		}
		if ok {
			msgs = append(msgs, Message{Topic: ts.name, Data: data, Flags: FlagBackfilled, RecvTime: now})
		}
	}
	if len(msgs) > 0 {
		msgs[0].Flags |= FlagReconnected
	}
	c.log.Info("backfilled", zap.String("topic", ts.name), zap.Uint64("from", first), zap.Uint64("to", last), zap.Int("messages", len(msgs)))
	return msgs, nil
}

// release delivers the fetched messages, then the held live ones but
// those the fetch delivered already, and lets the reader deliver again.
// With gap, the first live message is flagged FlagGap; after fetched
// ones, no live one is flagged FlagReconnected (the hole is filled).
func (c *Client) release(ts *topicState, fetched []Message, gap bool) {
	var seam uint64
	for _, m := range fetched {
		c.passHeld(ts, m)
		if pos, ok := c.backfilling.Position(m.Data); ok {
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
			pos, ok := c.backfilling.Position(m.Data)
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
