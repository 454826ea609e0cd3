package client

import (
	"fmt"

	"github.com/wsfan/wsfan/pkg/protocol"
)

// part records the answer a frame of a TopicAcking dialect (OKX) gives
// one topic of op's request, and reports whether every topic is answered
// now: an acknowledgement names its topic; a refusal names its topic, or
// none, and then refuses every topic not answered yet. A frame naming a
// topic answered already, or none of the request's, changes nothing.
// Runs on the reader goroutine with the pending table's lock held
// (pendingTable.takeAnswered); an op of any other dialect is answered
// whole by its one response.
func (op *subscribeOp) part(f *protocol.Frame) bool {
	if op.answered == nil {
		return true
	}
	ta := op.c.topicAcking
	if f.Error == nil {
		if i := ta.AckedTopic(&op.req, f.Result); i >= 0 && !op.answered[i] {
			op.mark(i, nil)
		}
		return op.left == 0
	}
	op.c.stats.rpcErrors.Add(1)
	refusal := parseRPCError(f.Error)
	if i := ta.RefusedTopic(&op.req, f.Error); i >= 0 {
		if !op.answered[i] {
			op.mark(i, refusal)
		}
		return op.left == 0
	}
	for i, done := range op.answered {
		if !done {
			op.mark(i, refusal)
		}
	}
	return true
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
