package sidecar

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"time"

	"github.com/gorilla/websocket"
	"go.uber.org/zap"

	"github.com/wsfan/wsfan/pkg/protocol"
)

// A WebSocket session's reader: each frame read from the socket is
// answered here, or handed on: subscription requests to the session's
// subscription goroutine (queueOp), forwarded calls to a goroutine each.

// readLoop reads frames until the connection fails or the session closes.
func (c *wsConn) readLoop() {
	for {
		typ, r, err := c.ws.NextReader()
		if err != nil {
			c.readFailed(err)
			return
		}
		data, ok := c.readFrame(typ, r)
		if ok {
			c.handle(data)
			_, closing := c.s.closeState()
			ok = !closing
		}
		if !ok {
			if reason, _ := c.s.closeState(); reason.code != 0 {
				c.linger(r)
			}
			return
		}
	}
}

// lingerTimeout bounds how long a reader drains a peer it is closing
// with a reason.
const lingerTimeout = time.Second

// linger reads and discards what the peer still sends after the session
// closed with a reason (the rest of a frame over the limit, frames already
// in flight) until the peer answers the close or lingerTimeout passes.
// Closing a socket with unread data makes the kernel send a reset, which
// can overtake the close frame: the peer would see "connection reset"
// instead of the reason.
func (c *wsConn) linger(rest io.Reader) {
	_ = c.nc.SetReadDeadline(time.Now().Add(lingerTimeout))
	_, _ = io.Copy(io.Discard, rest)
	for {
		_, r, err := c.ws.NextReader()
		if err != nil {
			return
		}
		_, _ = io.Copy(io.Discard, r)
	}
}

// readFrame reads one frame; it reports whether it is one to handle, and
// closes the session with the reason when it is not.
func (c *wsConn) readFrame(typ int, r io.Reader) ([]byte, bool) {
	if typ != websocket.TextMessage {
		c.s.close(reasonBinary, true)
		return nil, false
	}
	limit := c.cfg.MaxFrameBytes
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		c.s.close(closeReason{}, true)
		return nil, false
	}
	if int64(len(data)) > limit {
		c.s.close(reasonFrameTooLarge(limit), true)
		return nil, false
	}
	return data, true
}

// readFailed closes the session after a failed read, logging what is not
// a plain close.
func (c *wsConn) readFailed(err error) {
	var ce *websocket.CloseError
	if !errors.As(err, &ce) && !errors.Is(err, net.ErrClosed) && !errors.Is(err, io.EOF) {
		c.cfg.log.Debug("local client read failed", zap.Uint64("client", c.s.id), zap.Error(err))
	}
	c.s.close(closeReason{}, true)
}

// handle answers one frame from the client, parsed by the dialect's
// server half. It runs on the reader goroutine, which answers at once
// what needs no upstream (heartbeats, pings, refusals); subscription
// requests and batch arrays go to the session's subscription goroutine
// (queueOp), which answers them in order, so a subscribe the upstream is
// slow to answer holds up none of the client's calls and pings; forwarded
// calls run concurrently (bounded by Config.MaxCallsPerClient).
func (c *wsConn) handle(data []byte) {
	w := c.cfg.wire
	if answer, ok := w.AnswerKeepalive(data); ok { // the venue's keepalive
		c.s.reply(textFrame(answer)) // as the venue answers it
		return
	}
	maxBatch := c.cfg.live.Load().maxBatch // as last reloaded
	if n, over := batchLen(data, maxBatch); over && w.Batches() {
		c.refuseBatch(n, maxBatch)
		return
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
	if req.Op == protocol.OpSubscribe && req.Err == nil && c.blocked(req) == nil {
		c.queueOp(func() { // subscribe.go
			resp, attach := c.subscribe(req)
			c.answer(req, resp, attach)
		})
		return
	}
	if subscriptionOp(req) || (!w.RPC() && req.Err != nil) { // Ethereal: answered in order, see above
		c.queueOp(func() {
			resp, attach := c.changeTopics(req)
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

// blocked is the refusal of a request for a method in
// Config.BlockedMethods, or nil.
func (c *wsConn) blocked(req *protocol.Incoming) []byte {
	if !slices.Contains(c.cfg.BlockedMethods, req.Method) {
		return nil
	}
	why := " is not forwarded: the sidecar's upstream connection is shared by every local client"
	if own, ok := c.cfg.renamed[req.Method]; ok {
		why = fmt.Sprintf(" is not a %s method: its name is %q (which the sidecar answers itself)", c.cfg.Protocol, own)
	}
	return c.cfg.wire.AppendError(nil, req.ID, codeBlocked, req.Method+why, nil)
}

// changeTopics answers a subscription request (subscriptionOp, or an
// Ethereal error answered in order): at once, with the topics to attach
// with the answer. It runs on the subscription goroutine.
func (c *wsConn) changeTopics(req *protocol.Incoming) (resp []byte, attach []*topic) {
	w := c.cfg.wire
	if req.Err != nil {
		return w.AppendError(nil, req.ID, req.Err.Code, req.Err.Message, nil), nil
	}
	if refusal := c.blocked(req); refusal != nil {
		return refusal, nil
	}
	switch req.Op {
	case protocol.OpSubscribe:
		return c.subscribe(req)
	case protocol.OpUnsubscribe:
		return c.unsubscribe(req), nil
	}
	c.s.unsubscribeAll()
	return w.AppendResult(nil, req.ID, []byte(`"ok"`)), nil
}

// answer queues resp (none for a JSON-RPC notification, unless the venue
// answers requests without an id too, protocol.Venue.AnswersAll: OKX;
// Ethereal's events have no id and are answered with a status frame) and attaches
// the topics with it, as one step for the topics' pumps.
func (c *wsConn) answer(req *protocol.Incoming, resp []byte, attach []*topic) {
	if len(resp) == 0 || (len(req.ID) == 0 && c.cfg.wire.RPC() && !c.cfg.wire.Venue().AnswersAll) {
		c.s.attach(nil, attach)
		return
	}
	c.s.attach(textFrames(resp), attach)
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
	if refusal := c.blocked(req); refusal != nil {
		return refusal, nil, nil
	}
	switch req.Op {
	case protocol.OpSubscribe, protocol.OpUnsubscribe, protocol.OpUnsubscribeAll:
		resp, attach = c.changeTopics(req)
		return resp, attach, nil
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

// opsQueue is how many subscription requests may wait for the session's
// subscription goroutine before the reader waits too.
const opsQueue = 64

// queueOp hands op (a subscription request, or a batch array) to the
// session's subscription goroutine: it runs the ops one after the other,
// in the order the client sent them, so a subscribe and the unsubscribe
// after it keep their order, while the reader goes on answering pings,
// heartbeats and calls. The goroutine runs only while ops wait (an idle
// client costs no goroutine for it) and owns the session's topics
// (hub.reserve, session.await, attach, unsubscribe) while it runs; the reader
// hands it the next op only through the queue. Called by the reader
// only; it blocks while opsQueue ops wait.
func (c *wsConn) queueOp(op func()) {
	if c.ops == nil {
		c.ops = make(chan func(), opsQueue)
		c.opsCtx, c.cancelOps = context.WithCancel(c.cfg.ctx)
	}
	c.ops <- op
	c.opsMu.Lock()
	if !c.opsRunning {
		c.opsRunning = true
		c.opsWG.Add(1)
		go c.runOps()
	}
	c.opsMu.Unlock()
}

// runOps is the subscription goroutine: it runs the queued ops and ends
// when none is left.
func (c *wsConn) runOps() {
	defer c.opsWG.Done()
	for {
		select {
		case op := <-c.ops:
			op()
			continue
		default:
		}
		c.opsMu.Lock()
		if len(c.ops) == 0 { // an op queued from now on starts a new goroutine
			c.opsRunning = false
			c.opsMu.Unlock()
			return
		}
		c.opsMu.Unlock()
	}
}

// stopOps ends the subscription goroutine once the reader has ended: a
// subscribe still waiting for the upstream gives up, and it returns when
// the ops queued have run. Called by the reader only.
func (c *wsConn) stopOps() {
	if c.ops == nil {
		return
	}
	c.cancelOps()
	c.opsWG.Wait()
}
