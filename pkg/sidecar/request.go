package sidecar

import (
	"bytes"
	"encoding/json"
	"slices"
)

// request is a frame from a local client: a JSON-RPC request, or an
// Ethereal event.
type request struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	// Ethereal: {"event":"subscribe","data":{"type":...,"symbol":...}}
	Event string `json:"event"`
	Data  struct {
		Type         string `json:"type"`
		Symbol       string `json:"symbol"`
		SubaccountID string `json:"subaccountId"`
	} `json:"data"`
}

// handle answers one frame from the client. It runs on the reader
// goroutine: subscribes are answered in order, forwarded calls run
// concurrently (bounded by Config.MaxCallsPerClient).
func (c *wsConn) handle(data []byte) {
	data = bytes.TrimSpace(data)
	d := c.cfg.dialect
	if len(data) > 0 && data[0] == '[' && d.batches() {
		c.handleBatch(data)
		return
	}
	var req request
	if err := json.Unmarshal(data, &req); err != nil {
		if d.rpc() {
			c.s.reply(textFrame(d.appendError(nil, nil, codeParse, "parse error", nil)))
		}
		return
	}
	if d == dialectEthereal {
		c.handleEvent(&req)
		return
	}
	resp, attach, call := c.route(&req)
	if call != nil {
		c.calls <- struct{}{} // blocks reading while too many calls are in flight
		c.rpc.Add(1)
		go func() {
			defer c.rpc.Done()
			defer func() { <-c.calls }()
			if resp := call(); resp != nil {
				c.s.reply(textFrame(resp))
			}
		}()
		return
	}
	if resp == nil || len(req.ID) == 0 {
		c.s.attach(nil, attach)
		return
	}
	c.s.attach(textFrame(resp), attach)
}

// handleBatch answers a JSON-RPC batch array with an array of responses,
// in order; its calls run one after the other.
func (c *wsConn) handleBatch(data []byte) {
	d := c.cfg.dialect
	var elems []json.RawMessage
	if err := json.Unmarshal(data, &elems); err != nil || len(elems) == 0 {
		c.s.reply(textFrame(d.appendError(nil, nil, codeInvalidRequest, "invalid batch", nil)))
		return
	}
	out := []byte{'['}
	var attach []*topic
	for _, e := range elems {
		var req request
		var resp []byte
		if err := json.Unmarshal(e, &req); err != nil {
			resp = d.appendError(nil, nil, codeInvalidRequest, "invalid request", nil)
		} else {
			var topics []*topic
			var call func() []byte
			resp, topics, call = c.route(&req)
			if call != nil {
				resp = call()
			}
			attach = append(attach, topics...)
			if len(req.ID) == 0 {
				resp = nil // a notification gets no response
			}
		}
		if resp != nil {
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
// response.
func (c *wsConn) route(req *request) (resp []byte, attach []*topic, call func() []byte) {
	d := c.cfg.dialect
	id := req.ID
	if req.Method == "" {
		return d.appendError(nil, id, codeInvalidRequest, "invalid request: no method", nil), nil, nil
	}
	if slices.Contains(c.cfg.BlockedMethods, req.Method) {
		return d.appendError(nil, id, codeBlocked, req.Method+
			" is not forwarded: the sidecar's upstream connection is shared by every local client", nil), nil, nil
	}
	switch d {
	case dialectThalex, dialectDeribit:
		switch req.Method {
		case "public/subscribe", "private/subscribe":
			return c.subscribeChannels(id, req.Params)
		case "public/unsubscribe", "private/unsubscribe":
			return c.unsubscribeChannels(id, req.Params), nil, nil
		case "public/unsubscribe_all", "private/unsubscribe_all":
			c.s.unsubscribeAll()
			return d.appendResult(nil, id, []byte(`"ok"`)), nil, nil
		}
		if d == dialectDeribit {
			if resp, ok := c.heartbeatMethod(req); ok {
				return resp, nil, nil
			}
		}
	case dialectEthereum:
		switch req.Method {
		case "eth_subscribe":
			return c.ethSubscribe(id, req.Params)
		case "eth_unsubscribe":
			return c.ethUnsubscribe(id, req.Params), nil, nil
		}
	}
	ctx := c.callContext()
	return nil, nil, func() []byte { return c.forward(ctx, id, req.Method, req.Params) }
}

// handleEvent handles an Ethereal subscribe or unsubscribe event; Ethereal
// acknowledges nothing, and other frames are ignored as upstream.
func (c *wsConn) handleEvent(req *request) {
	key := req.Data.Symbol
	if key == "" {
		key = req.Data.SubaccountID
	}
	if req.Data.Type == "" || key == "" {
		return
	}
	name := req.Data.Type + ":" + key
	switch req.Event {
	case "subscribe":
		_, attach, _ := c.s.subscribe(c.cfg.ctx, []string{name})
		c.s.attach(nil, attach)
	case "unsubscribe":
		c.s.unsubscribe([]string{name})
	}
}
