package sidecar

import (
	"fmt"
	"sync"

	"github.com/wsfan/wsfan/pkg/protocol"
)

// A JSON-RPC batch array is treated as its requests would be one by one,
// after go-ethereum's server (BatchRequestLimit, BatchResponseMaxSize):
// at most Config.MaxBatch requests, refused whole before any is parsed;
// each subscribe held to the limits it would meet alone, those before it
// in the batch counted as held (session.pending); its subscribes sent
// upstream together; its calls run concurrently under
// Config.MaxCallsPerClient; one answer array, in request order, never
// larger than the client's queue.

// handleBatch answers a batch array. It runs on the subscription
// goroutine.
func (c *wsConn) handleBatch(reqs []protocol.Incoming) {
	answers := make([][]byte, len(reqs))
	var attach []*topic
	var started []*subscribing // subscribes reserved, not yet waited for
	var at []int               // their places in reqs
	finish := func() {
		for k, sub := range started {
			resp, topics := c.finishSubscribe(sub)
			answers[at[k]] = resp
			attach = append(attach, topics...)
		}
		started, at = started[:0], at[:0]
	}
	var calls sync.WaitGroup
	for i := range reqs {
		if _, closing := c.s.closeState(); closing {
			// Past a limit that closes the session (too many topics):
			// the rest is not served, and what it reserved is let go
			// when the session ends.
			calls.Wait()
			return
		}
		req := &reqs[i]
		switch {
		case req.Err == nil && req.Op == protocol.OpSubscribe && c.blocked(req) == nil:
			started = append(started, c.startSubscribe(req))
			at = append(at, i)
		case subscriptionOp(req):
			// An unsubscribe meets the subscribes before it answered, as
			// it would one by one.
			finish()
			var topics []*topic
			answers[i], topics = c.changeTopics(req)
			attach = append(attach, topics...)
		default:
			resp, topics, call := c.route(req)
			attach = append(attach, topics...)
			if call == nil {
				answers[i] = resp
				continue
			}
			c.calls <- struct{}{} // waits while too many calls are in flight
			calls.Add(1)
			c.rpc.Add(1)
			c.inflight.Add(1)
			go func() {
				defer calls.Done()
				defer c.rpc.Done()
				defer c.inflight.Add(-1)
				defer func() { <-c.calls }()
				answers[i] = call()
			}()
		}
	}
	finish()
	calls.Wait()
	out, ok := c.batchAnswer(reqs, answers)
	if !ok {
		c.s.letGo(attach)
		return
	}
	c.s.attach(out, attach)
}

// batchAnswer joins the answers of a batch into one array, in request
// order, leaving out notifications' (a request without an id gets no
// answer). It returns nil when none is left, and reports false, closing
// the session with close code 1009 and the reason, as soon as the array
// would pass the client's queue bound: it is never built beyond it.
func (c *wsConn) batchAnswer(reqs []protocol.Incoming, answers [][]byte) ([]byte, bool) {
	var out []byte
	for i, resp := range answers {
		if len(resp) == 0 || (len(reqs[i].ID) == 0 && reqs[i].Err == nil) {
			continue
		}
		if len(out)+len(resp)+2 > c.cfg.QueueBytes {
			size := len(out) + len(resp) + 2
			for _, rest := range answers[i+1:] {
				size += len(rest) + 1
			}
			c.s.close(reasonReplyTooLarge(size, c.cfg.QueueBytes), true)
			return nil, false
		}
		if out == nil {
			out = append(make([]byte, 0, 64+len(resp)), '[')
		} else {
			out = append(out, ',')
		}
		out = append(out, resp...)
	}
	if out == nil {
		return nil, true
	}
	return textFrame(append(out, ']')), true
}

// refuseBatch answers a batch of n requests or more, past limit
// (Config.MaxBatch), with one error naming the limit, as go-ethereum's
// server answers one past its BatchRequestLimit. Called by the reader.
func (c *wsConn) refuseBatch(n, limit int) {
	msg := fmt.Sprintf("batch too large: more than %d requests (%d or more); the sidecar takes at most %d in one batch (-max-batch)",
		limit, n, limit)
	c.cfg.hub.refused(c.s, nil, fmt.Errorf("%w: %s", errBatchTooLarge, msg))
	c.s.reply(textFrame(c.cfg.wire.AppendError(nil, nil, protocol.CodeInvalidRequest, msg, nil)))
}

// batchLen counts the elements of frame when it is a JSON array, up to
// limit+1: it reports over once there are more than limit, having read
// no further. A frame that is not an array, or not valid JSON, counts 0
// and is left to the dialect's parser to refuse. It reads each byte at
// most once and allocates nothing.
func batchLen(frame []byte, limit int) (n int, over bool) {
	i := 0
	for i < len(frame) && isJSONSpace(frame[i]) {
		i++
	}
	if i == len(frame) || frame[i] != '[' {
		return 0, false
	}
	depth, inString, escaped, empty := 0, false, false, true
	for _, b := range frame[i+1:] {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case b == '\\':
				escaped = true
			case b == '"':
				inString = false
			}
			continue
		case isJSONSpace(b):
			continue
		}
		if empty && b != ']' {
			empty, n = false, 1
		}
		switch b {
		case '"':
			inString = true
		case '[', '{':
			depth++
		case ']', '}':
			if depth == 0 {
				return n, false
			}
			depth--
		case ',':
			if depth == 0 {
				if n++; n > limit {
					return n, true
				}
			}
		}
	}
	return n, n > limit
}

// isJSONSpace reports whether b is JSON's insignificant whitespace.
func isJSONSpace(b byte) bool {
	return b == ' ' || b == '\t' || b == '\n' || b == '\r'
}
