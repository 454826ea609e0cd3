package client

import (
	"fmt"

	"go.uber.org/zap"

	"github.com/wsfan/wsfan/pkg/protocol"
)

// Part records the answer a frame of a TopicAcking dialect (OKX) gives
// one topic of op's request, and reports whether every topic is answered
// now: an acknowledgement names its topic; a refusal names its topic,
// refuses the request as a whole (then every topic not answered yet), or
// names none of them: it refuses one, which is known once only as many
// topics are left unanswered as such refusals came. An acknowledgement
// naming a topic answered already, or none of the request's, changes
// nothing (it is logged).
// Runs on the reader goroutine with the pending table's lock held
// (pending.Table.TakeAnswered); an op of any other dialect is answered
// whole by its one response.
func (op *subscribeOp) Part(f *protocol.Frame) bool {
	if op.answered == nil {
		return true
	}
	ta := op.c.venue.TopicAcks
	if f.Error == nil {
		i := ta.AckedTopic(&op.req, f.Result)
		op.markOnce(i, nil, f.Result)
	} else {
		op.c.stats.rpcErrors.Add(1)
		refusal := parseRPCError(f.Error)
		switch i, whole := ta.RefusedTopic(&op.req, f.Error); {
		case whole:
			op.markRest(refusal)
		case i >= 0:
			op.markOnce(i, refusal, f.Error)
		default:
			op.unnamed = append(op.unnamed, refusal)
		}
	}
	if op.left > 0 && op.left <= len(op.unnamed) {
		op.markRest(op.unnamed[0]) // the topics no answer named are the ones refused
	}
	return op.left == 0
}

// markRest marks every topic not answered yet refused with refusal.
func (op *subscribeOp) markRest(refusal *RPCError) {
	for i, done := range op.answered {
		if !done {
			op.mark(i, refusal)
		}
	}
}

// markOnce marks topic i answered, unless it names no topic of the
// request or one answered already: that answer (raw) is logged and
// changes nothing. (No two topics of a request share a routing key:
// clashesLocked.)
func (op *subscribeOp) markOnce(i int, refusal *RPCError, raw []byte) {
	if i < 0 || op.answered[i] {
		op.c.log.Warn("an answer to a subscription request names no topic of it still waiting; ignored",
			zap.Uint64("request", op.req.ID), zap.ByteString("answer", raw[:min(len(raw), 200)]))
		return
	}
	op.mark(i, refusal)
}

// mark records topic i answered: acknowledged (refusal nil) or refused.
func (op *subscribeOp) mark(i int, refusal *RPCError) {
	op.answered[i] = true
	op.left--
	op.refusals[i] = refusal
	if refusal == nil && op.subscribe {
		op.keys[i] = op.req.Topics[i].Key
	}
}

// settleParts turns the answers of op's topics into its outcome once
// the last one came: a request whose every topic was refused for the
// same pace of requests is throttled (sent again once the pace allows);
// otherwise acknowledged topics keep their keys and refused ones their
// reasons (settleLocked).
func (op *subscribeOp) settleParts() {
	first := op.refusals[0]
	if first == nil || !op.c.throttled(first) {
		return
	}
	for _, r := range op.refusals {
		if r == nil || r.Code != first.Code {
			return
		}
	}
	op.err = fmt.Errorf("%w: %w", errThrottled, first)
}
