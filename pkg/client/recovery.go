package client

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"go.uber.org/zap"

	"github.com/wsfan/wsfan/internal/recovery"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// The recovery seam. What a Backfill topic (protocol.Recoverer: an
// Ethereum node's newHeads and logs) missed during a reconnect, and the
// chain of its heads, are package recovery's: the client plugs one
// recovery.Recovery in at Dial and is its Host. The core calls it at
// four points: the reader hands it each message of such a topic
// (Topic.Pass: held while a backfill runs, else placed and linked), the
// supervisor has it hold those topics before a restore and recover them
// after (connect), and a Subscribe of a sparse one has it take the
// topic's starting place (Baseline).

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

// pass is the reader's part of a Backfill topic's message: flagged
// FlagRetracted where it is a retraction (a log a reorg removed), then
// handed to the recovery (recovery.Topic.Pass), which holds it while a
// backfill runs (false) or places it, flagging a reorg; it returns the
// place read (0: none). A call of its own, so that deliver's message
// stays on its stack.
func (c *Client) pass(ts *topicState, msg *Message) (place uint64, ok bool) {
	if ts.topic.Retracts && c.venue.Messages != nil && c.venue.Messages.Retracted(msg.Data) {
		msg.Flags |= FlagRetracted
	}
	m, place, ok := ts.rec.Pass(*msg)
	*msg = m
	return place, ok
}

// recoveryHost is the client as its recovery's Host.
type recoveryHost struct{ c *Client }

// openTopic is the state of a topic t the client starts to hold, with its
// recovery's part when t is a Backfill topic.
func (c *Client) openTopic(t *protocol.Topic) *topicState {
	ts := newTopicState(t)
	if t.Backfill {
		ts.rec = c.recovery.NewTopic(t,
			func(m Message) {
				if subs := ts.subs.Load(); subs != nil {
					deliverAll(c, subs, m)
				}
			},
			func() { ts.resumed.Store(false) })
	}
	return ts
}

// holdRecovering has the recovery hold the live messages of the
// confirmed Backfill topics, before a restore subscribes them again, and
// returns those it holds.
func (c *Client) holdRecovering() []*recovery.Topic[Message] {
	c.mu.Lock()
	defer c.mu.Unlock()
	var held []*recovery.Topic[Message]
	for _, ts := range c.topics.all() {
		if ts.rec != nil && ts.confirmed && c.recovery.Hold(ts.rec) {
			held = append(held, ts.rec)
		}
	}
	return held
}

// marks maps the recovery's marks to the client's flags.
var marks = [...]struct {
	mark recovery.Mark
	flag Flags
}{{recovery.Backfilled, FlagBackfilled}, {recovery.Reconnected, FlagReconnected}, {recovery.Gap, FlagGap}, {recovery.Reorg, FlagReorg}}

func flagsOf(m recovery.Mark) Flags {
	var f Flags
	for _, k := range marks {
		if m&k.mark != 0 {
			f |= k.flag
		}
	}
	return f
}

func (recoveryHost) Data(m Message) []byte { return m.Data }

func (recoveryHost) Mark(m Message, set, clear recovery.Mark) Message {
	m.Flags = m.Flags&^flagsOf(clear) | flagsOf(set)
	return m
}

func (recoveryHost) Fetched(topic string, data []byte, marks recovery.Mark, now time.Time) Message {
	return Message{Topic: topic, Data: data, Flags: flagsOf(marks), RecvTime: now}
}

func (h recoveryHost) Call(ctx context.Context, method string, params json.RawMessage) ([]byte, error) {
	return h.c.CallRaw(ctx, method, params)
}

func (h recoveryHost) Batch(ctx context.Context, calls []protocol.Call) ([]json.RawMessage, []error, error) {
	raws := make([]json.RawMessage, len(calls))
	batch := make([]BatchElem, len(calls))
	for i, call := range calls {
		batch[i] = BatchElem{Method: call.Method, Params: json.RawMessage(call.Params), Result: &raws[i]}
	}
	if err := h.c.BatchCall(ctx, batch); err != nil {
		return nil, nil, err
	}
	errs := make([]error, len(batch))
	for i := range batch {
		errs[i] = batch[i].Error
	}
	return raws, errs, nil
}

func (h recoveryHost) RangeTooLarge(err error) bool {
	var rpcErr *RPCError
	return errors.As(err, &rpcErr) && h.c.classifyError(rpcErr.Code, rpcErr.Message).RangeTooLarge
}

func (h recoveryHost) Reorg(topic string, head uint64, replaced []string, deep bool) {
	h.c.log.Info("reorg", zap.String("topic", topic), zap.Uint64("head", head), zap.Int("depth", len(replaced)), zap.Bool("deep", deep))
	h.c.emit(Event{Kind: Reorg, Topic: topic, Depth: len(replaced), Replaced: replaced})
}

func (h recoveryHost) Topics(yield func(*recovery.Topic[Message]) bool) {
	h.c.mu.Lock()
	defer h.c.mu.Unlock()
	for _, ts := range h.c.topics.all() {
		if ts.rec != nil && !yield(ts.rec) {
			return
		}
	}
}

// baselineFresh has the recovery take the starting place of the Backfill
// topics among states, which a Subscribe just opened.
func (c *Client) baselineFresh(ctx context.Context, states []*topicState) {
	var fresh []*recovery.Topic[Message]
	for _, ts := range states {
		if ts.rec != nil {
			fresh = append(fresh, ts.rec)
		}
	}
	c.recovery.Baseline(ctx, fresh)
}
