package exchangetest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// Handler answers one RPC method. It returns the result, marshalled with
// encoding/json (a json.RawMessage passes through), or an *RPCError. It runs
// on the connection's reader goroutine, so it delays the frames after it.
type Handler func(params json.RawMessage) (any, *RPCError)

// RPCError is a JSON-RPC error object, sent as "error" in a response.
type RPCError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

// Error implements error.
func (e *RPCError) Error() string {
	return fmt.Sprintf("exchangetest: rpc error %d: %s", e.Code, e.Message)
}

// Standard JSON-RPC errors.
var (
	errParse          = &RPCError{Code: -32700, Message: "parse error"}
	errInvalidRequest = &RPCError{Code: -32600, Message: "invalid request"}
	errMethodNotFound = &RPCError{Code: -32601, Message: "method not found"}
	errInvalidParams  = &RPCError{Code: -32602, Message: "invalid params"}
	errTooMany        = &RPCError{Code: -32600, Message: "too many channels"}
	errBatchTooLarge  = &RPCError{Code: -32600, Message: "batch too large"}
)

// Handle registers h for method, replacing an earlier handler. Built-in
// methods (subscribe, unsubscribe, login, heartbeat) take precedence over
// handlers; unknown methods get error -32601 "method not found". The
// Ethereal dialect has no RPC, so its handlers are never called.
func (s *Server) Handle(method string, h Handler) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if h == nil {
		delete(s.handlers, method)
		return
	}
	s.handlers[method] = h
}

func (s *Server) handler(method string) Handler {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.handlers[method]
}

// request is one JSON-RPC request. ID is nil when the request has no id (a
// notification, which gets no response).
type request struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// rpcDialect is what a JSON-RPC dialect adds to the common request handling.
type rpcDialect interface {
	// builtin answers the dialect's own methods; ok is false for others. It
	// runs on c's reader goroutine and may append to c.after.
	builtin(c *conn, req *request) (result any, rerr *RPCError, ok bool)
	// appendResult appends a response carrying result (raw JSON).
	appendResult(dst []byte, id, result []byte, received time.Time) []byte
	// appendError appends an error response.
	appendError(dst []byte, id []byte, e *RPCError) []byte
	// batch reports whether JSON-RPC batch arrays are supported.
	batch() bool
}

var nullID = []byte("null")

// serveRPC handles one JSON-RPC text frame (a request or a batch array) on
// c's reader goroutine.
func serveRPC(c *conn, d rpcDialect, msg []byte) {
	received := time.Now()
	trimmed := bytes.TrimSpace(msg)
	if len(trimmed) > 0 && trimmed[0] == '[' {
		serveBatch(c, d, trimmed, received)
		return
	}
	var req request
	if err := json.Unmarshal(trimmed, &req); err != nil {
		c.reply(d.appendError(nil, nullID, errParse))
		return
	}
	if resp := call(c, d, &req, received); resp != nil {
		c.reply(resp)
	}
}

// serveBatch answers a batch array with one array of responses.
func serveBatch(c *conn, d rpcDialect, msg []byte, received time.Time) {
	var elems []json.RawMessage
	if err := json.Unmarshal(msg, &elems); err != nil {
		c.reply(d.appendError(nil, nullID, errParse))
		return
	}
	switch {
	case !d.batch():
		c.reply(d.appendError(nil, nullID, &RPCError{Code: -32600, Message: "batch requests are not supported"}))
		return
	case len(elems) == 0:
		c.reply(d.appendError(nil, nullID, &RPCError{Code: -32600, Message: "empty batch"}))
		return
	case c.s.cfg.batchCap > 0 && len(elems) > c.s.cfg.batchCap:
		c.reply(d.appendError(nil, nullID, errBatchTooLarge))
		return
	}
	out := []byte{'['}
	n := 0
	for _, e := range elems {
		var req request
		var resp []byte
		if err := json.Unmarshal(e, &req); err != nil {
			resp = d.appendError(nil, nullID, errInvalidRequest)
		} else {
			resp = call(c, d, &req, received)
		}
		if resp == nil {
			continue
		}
		if n > 0 {
			out = append(out, ',')
		}
		out = append(out, resp...)
		n++
	}
	if n == 0 { // only notifications: no response, but keep registrations
		if after := c.takeAfter(); after != nil {
			after()
		}
		return
	}
	c.reply(append(out, ']'))
}

// call runs one request and returns its encoded response, or nil for a
// notification. Registrations stay in c.after for the caller's reply.
func call(c *conn, d rpcDialect, req *request, received time.Time) []byte {
	var (
		result any
		rerr   *RPCError
		ok     bool
		mark   = len(c.after)
	)
	switch {
	case req.Method == "":
		rerr, ok = errInvalidRequest, true
	case !c.allow():
		rerr, ok = throttled(c.s.dialect), true
	default:
		result, rerr, ok = d.builtin(c, req)
	}
	if !ok {
		if h := c.s.handler(req.Method); h != nil {
			result, rerr = h(req.Params)
		} else {
			rerr = errMethodNotFound
		}
	}
	if req.ID == nil { // a notification: register at once, answer nothing
		for _, f := range c.after[mark:] {
			f()
		}
		c.after = c.after[:mark]
		return nil
	}
	if rerr != nil {
		return d.appendError(nil, req.ID, rerr)
	}
	raw, err := marshalResult(result)
	if err != nil {
		return d.appendError(nil, req.ID, &RPCError{Code: -32603, Message: "internal error: " + err.Error()})
	}
	return d.appendResult(nil, req.ID, raw, received)
}

func marshalResult(v any) ([]byte, error) {
	switch v := v.(type) {
	case json.RawMessage:
		if len(v) == 0 {
			return nullID, nil
		}
		return v, nil
	}
	return json.Marshal(v)
}

// appendErrorObject appends e as a JSON object.
func appendErrorObject(dst []byte, e *RPCError) []byte {
	b, err := json.Marshal(e)
	if err != nil {
		b, _ = json.Marshal(&RPCError{Code: e.Code, Message: e.Message})
	}
	return append(dst, b...)
}

// params decodes a request's params into v, reporting success.
func decodeParams(req *request, v any) bool {
	return len(req.Params) > 0 && json.Unmarshal(req.Params, v) == nil
}
