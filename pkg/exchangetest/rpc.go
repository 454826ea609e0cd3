package exchangetest

import (
	"encoding/json"
	"time"

	"github.com/wsfan/wsfan/pkg/protocol"
)

// Handler answers one RPC method. It returns the result, marshalled with
// encoding/json (a json.RawMessage passes through), or a *protocol.Error
// (protocol.NewError encodes its data). It runs on the connection's reader
// goroutine, so it delays the frames after it.
type Handler func(params json.RawMessage) (any, *protocol.Error)

// The errors of the server's own refusals.
var (
	errMethodNotFound = &protocol.Error{Code: protocol.CodeMethodNotFound, Message: "method not found"}
	errTooMany        = &protocol.Error{Code: protocol.CodeInvalidRequest, Message: "too many channels"}
	errBatchTooLarge  = &protocol.Error{Code: protocol.CodeInvalidRequest, Message: "batch too large"}
)

// Handle registers h for method, replacing an earlier handler. Built-in
// methods (subscribe, unsubscribe, login, heartbeat) take precedence over
// handlers, and handlers over the public methods the exchange answers
// (venue.Exchange.Methods: the instrument list, the server time);
// unknown methods get error -32601 "method not found". A dialect without
// RPC (Ethereal) never calls its handlers.
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

// serve handles the requests read from one text frame (or the refusal of
// the whole frame) on c's reader goroutine.
func serve(c *conn, reqs []protocol.Incoming, batch bool, ferr *protocol.Error, received time.Time) {
	switch {
	case !c.s.wire.RPC():
		serveEvents(c, reqs, ferr)
	case ferr != nil:
		c.reply(c.s.appendError(nil, nil, &protocol.Error{Code: ferr.Code, Message: ferr.Message}))
	case !batch:
		if resp := call(c, &reqs[0], received); resp != nil {
			c.reply(resp)
		}
	default:
		serveBatch(c, reqs, received)
	}
}

// serveBatch answers a batch array with one array of responses.
func serveBatch(c *conn, reqs []protocol.Incoming, received time.Time) {
	limit := c.s.ex.MaxBatch
	if c.s.cfg.batchCap > 0 {
		limit = c.s.cfg.batchCap
	}
	if limit > 0 && len(reqs) > limit {
		// As go-ethereum's handler answers a batch over its limit
		// (rpc/handler.go, respondWithBatchTooLarge): one error in an
		// array, under the first request's id; the others get nothing.
		var id []byte
		for i := range reqs {
			if len(reqs[i].ID) > 0 {
				id = reqs[i].ID
				break
			}
		}
		c.reply(append(c.s.appendError([]byte{'['}, id, errBatchTooLarge), ']'))
		return
	}
	out := []byte{'['}
	n := 0
	for i := range reqs {
		resp := call(c, &reqs[i], received)
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
			c.sendAll(after())
		}
		return
	}
	c.reply(append(out, ']'))
}

// call runs one request and returns its encoded response, or nil for a
// notification. Registrations stay in c.after for the caller's reply.
func call(c *conn, req *protocol.Incoming, received time.Time) []byte {
	var (
		result any
		rerr   *protocol.Error
		ok     bool
		mark   = len(c.after)
	)
	switch {
	case req.Method != "" && !c.allow(limitMethod(req)): // what is not a request costs nothing
		rerr, ok = c.s.throttled(), true
		c.ending = c.ending || c.s.ex.ThrottleEndsSession
	case req.Err != nil:
		rerr, ok = &protocol.Error{Code: req.Err.Code, Message: req.Err.Message}, true
	default:
		if req.Credential != nil {
			if rerr = carried(c, req); rerr != nil && req.Op == protocol.OpCall {
				ok = true // a call it refuses is answered with the refusal
				break
			}
			// A subscribe it refuses is refused topic by topic: the
			// connection is not logged in.
		}
		result, rerr, ok = builtin(c, req, received)
	}
	if !ok {
		if h := c.s.handler(req.Method); h != nil {
			result, rerr = h(req.Params)
		} else if r, fed := c.s.lv.answer(c.s.ex.FeedMethods[req.Method], received); fed {
			result = r
		} else if m := c.s.ex.Methods[req.Method]; m != nil {
			result = m(c.s.FeedInstruments(), received)
		} else {
			rerr = errMethodNotFound
		}
	}
	if ta, ok := result.(topicAnswers); ok && rerr == nil {
		// Answered topic by topic, with or without an id (OKX's ids
		// are optional: an answer echoes one only where it was sent).
		return ta.append(nil, c.s.wire.(protocol.TopicAnswering), req.ID)
	}
	if req.ID == nil && !c.s.wire.Venue().AnswersAll { // a notification: register at once, answer nothing
		c.sendAll(runAfter(c.after[mark:]))
		c.after = c.after[:mark]
		return nil
	}
	if rerr != nil {
		return c.s.appendError(nil, req.ID, rerr)
	}
	raw, err := marshalResult(result)
	if err != nil {
		return c.s.appendError(nil, req.ID, &protocol.Error{Code: protocol.CodeInternalError, Message: "internal error: " + err.Error()})
	}
	if c.s.ex.AppendResult != nil {
		return c.s.ex.AppendResult(nil, req.ID, raw, received)
	}
	return c.s.wire.AppendResult(nil, req.ID, raw)
}

// limitMethod is the method a request limit charges req as: the
// subscription requests under protocol's names, whatever the dialect
// calls them.
func limitMethod(req *protocol.Incoming) string {
	switch req.Op {
	case protocol.OpSubscribe:
		return protocol.SubscribeMethod
	case protocol.OpUnsubscribe:
		return protocol.UnsubscribeMethod
	}
	return req.Method
}

// throttled is the exchange's refusal of a request over the rate limit.
func (s *Server) throttled() *protocol.Error {
	if e := s.ex.Throttled; e != nil {
		return e
	}
	return &protocol.Error{Code: -32005, Message: "limit exceeded"}
}

func marshalResult(v any) ([]byte, error) {
	switch v := v.(type) {
	case json.RawMessage:
		if len(v) == 0 {
			return []byte("null"), nil
		}
		return v, nil
	}
	return json.Marshal(v)
}

// appendError appends the response to request id (nil: null) refusing it
// with e.
func (s *Server) appendError(dst, id []byte, e *protocol.Error) []byte {
	return s.wire.AppendError(dst, id, e.Code, e.Message, e.Data)
}
