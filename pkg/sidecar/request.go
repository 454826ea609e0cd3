package sidecar

import (
	"fmt"
	"slices"

	"github.com/wsfan/wsfan/pkg/protocol"
)

// handle answers one frame from the client, parsed by the dialect's
// server half. It runs on the reader goroutine, which answers at once
// what needs no upstream (heartbeats, pings, refusals); subscription
// requests and batch arrays go to the session's subscription goroutine
// (ops.go), which answers them in order, so a subscribe the upstream is
// slow to answer holds up none of the client's calls and pings; forwarded
// calls run concurrently (bounded by Config.MaxCallsPerClient).
func (c *wsConn) handle(data []byte) {
	w := c.cfg.wire
	if c.cfg.keepalive != nil {
		if answer, ok := c.cfg.keepalive.AnswerKeepalive(data); ok {
			c.s.reply(textFrame(answer)) // as the venue answers it
			return
		}
	}
	reqs, batch, ferr := w.ParseFrame(nil, data)
	if ferr != nil {
		refusal := textFrame(w.AppendError(nil, nil, ferr.Code, ferr.Message, nil))
		if w.RPC() {
			c.s.reply(refusal)
			return
		}
		// Ethereal's answers carry no id: a client matches them by their
		// order, so this one waits behind the events before it.
		c.queueOp(func() { c.s.reply(refusal) })
		return
	}
	if batch {
		c.queueOp(func() { c.handleBatch(reqs) })
		return
	}
	if len(reqs) == 0 {
		return
	}
	req := &reqs[0]
	if subscriptionOp(req) || (!w.RPC() && req.Err != nil) { // Ethereal: answered in order, see above
		c.queueOp(func() {
			resp, attach, _ := c.route(req)
			c.answer(req, resp, attach)
		})
		return
	}
	resp, attach, call := c.route(req)
	if call != nil {
		c.calls <- struct{}{} // blocks reading while too many calls are in flight
		c.rpc.Add(1)
		c.inflight.Add(1)
		go func() {
			defer c.rpc.Done()
			defer c.inflight.Add(-1)
			defer func() { <-c.calls }()
			if resp := call(); resp != nil {
				c.s.reply(textFrame(resp))
			}
		}()
		return
	}
	c.answer(req, resp, attach)
}

// subscriptionOp reports whether req changes the session's topics.
func subscriptionOp(req *protocol.Incoming) bool {
	if req.Err != nil {
		return false
	}
	switch req.Op {
	case protocol.OpSubscribe, protocol.OpUnsubscribe, protocol.OpUnsubscribeAll:
		return true
	}
	return false
}

// answer queues resp (none for a JSON-RPC notification; Ethereal's
// events have no id and are answered with a status frame) and attaches
// the topics with it, as one step for the topics' pumps.
func (c *wsConn) answer(req *protocol.Incoming, resp []byte, attach []*topic) {
	if len(resp) == 0 || (len(req.ID) == 0 && c.cfg.wire.RPC()) {
		c.s.attach(nil, attach)
		return
	}
	c.s.attach(textFrame(resp), attach)
}

// handleBatch answers a JSON-RPC batch array with an array of responses,
// in order; its calls run one after the other. It runs on the
// subscription goroutine.
func (c *wsConn) handleBatch(reqs []protocol.Incoming) {
	out := []byte{'['}
	var attach []*topic
	for i := range reqs {
		req := &reqs[i]
		resp, topics, call := c.route(req)
		if call != nil {
			resp = call()
		}
		attach = append(attach, topics...)
		if len(req.ID) == 0 && req.Err == nil {
			resp = nil // a notification gets no response
		}
		if len(resp) > 0 {
			if len(out) > 1 {
				out = append(out, ',')
			}
			out = append(out, resp...)
		}
	}
	if len(out) == 1 {
		c.s.attach(nil, attach)
		return
	}
	c.s.attach(textFrame(append(out, ']')), attach)
}

// route answers one request: at once (resp, and the topics to attach
// with it), or through call, which forwards it upstream and returns the
// response. Subscriptions and Deribit's heartbeats are the sidecar's own;
// any other method is forwarded, unless blocked. Ethereal forwards
// nothing.
func (c *wsConn) route(req *protocol.Incoming) (resp []byte, attach []*topic, call func() []byte) {
	w := c.cfg.wire
	if req.Err != nil {
		return w.AppendError(nil, req.ID, req.Err.Code, req.Err.Message, nil), nil, nil
	}
	if slices.Contains(c.cfg.BlockedMethods, req.Method) {
		why := " is not forwarded: the sidecar's upstream connection is shared by every local client"
		if own, ok := c.cfg.renamed[req.Method]; ok {
			why = fmt.Sprintf(" is not a %s method: its name is %q (which the sidecar answers itself)", c.cfg.Protocol, own)
		}
		return w.AppendError(nil, req.ID, codeBlocked, req.Method+why, nil), nil, nil
	}
	switch req.Op {
	case protocol.OpSubscribe:
		return c.subscribe(req)
	case protocol.OpUnsubscribe:
		return c.unsubscribe(req), nil, nil
	case protocol.OpUnsubscribeAll:
		c.s.unsubscribeAll()
		return w.AppendResult(nil, req.ID, []byte(`"ok"`)), nil, nil
	case protocol.OpHeartbeat, protocol.OpHeartbeatReply:
		return c.heartbeat(req), nil, nil
	}
	if !w.RPC() {
		return nil, nil, nil // an Ethereal event the sidecar does not serve: ignored, as upstream
	}
	if c.cfg.clients.isDraining() {
		return w.AppendError(nil, req.ID, codeUpstream, "the sidecar is shutting down: "+req.Method+" was not forwarded", nil), nil, nil
	}
	ctx := c.callContext()
	id, method, params := req.ID, req.Method, req.Params
	return nil, nil, func() []byte { return c.forward(ctx, id, method, params) }
}
