package protocol

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// The standard JSON-RPC 2.0 error codes, for a server's answers.
const (
	CodeParseError     = -32700 // the frame is not JSON
	CodeInvalidRequest = -32600 // the frame is not a request this server takes
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
)

// rpcHead opens a JSON-RPC 2.0 response up to its id.
const rpcHead = `{"jsonrpc":"2.0","id":`

// nullID is the id of a response to a request whose id is unknown.
var nullID = []byte("null")

// rpcServer is the server half the JSON-RPC dialects share: requests
// read with encoding/json (they are not the hot path), responses under
// one head, notifications in one layout.
type rpcServer struct {
	name    string
	head    string // a response up to its id
	batches bool
	note    notification
}

// notification is the layout of a JSON-RPC dialect's notification: head,
// the routing key as a JSON string, mid, the payload, tail.
type notification struct{ head, mid, tail string }

func (n *notification) appendTo(dst []byte, key string, data []byte) []byte {
	dst = append(dst, n.head...)
	dst = AppendJSONString(dst, key)
	dst = append(dst, n.mid...)
	dst = append(dst, data...)
	return append(dst, n.tail...)
}

func (n *notification) envelope(key string) (prefix, suffix []byte) {
	prefix = make([]byte, 0, len(n.head)+len(key)+2+len(n.mid))
	prefix = append(AppendJSONString(append(prefix, n.head...), key), n.mid...)
	return prefix, []byte(n.tail)
}

func (s *rpcServer) Name() string                            { return s.name }
func (s *rpcServer) RPC() bool                               { return true }
func (s *rpcServer) Batches() bool                           { return s.batches }
func (s *rpcServer) Private(string) bool                     { return false }
func (s *rpcServer) SubscriptionID() string                  { return "" }
func (s *rpcServer) AppendHeartbeat(dst []byte) []byte       { return dst }
func (s *rpcServer) AppendReconnectNotice(dst []byte) []byte { return dst }

func (s *rpcServer) AppendResult(dst, id, result []byte) []byte {
	return append(s.openResult(dst, id, result), '}')
}

// openResult appends a response carrying result without its closing
// brace, for a dialect that adds members.
func (s *rpcServer) openResult(dst, id, result []byte) []byte {
	dst = s.appendHead(dst, id)
	dst = append(dst, `,"result":`...)
	return append(dst, result...)
}

func (s *rpcServer) AppendError(dst, id []byte, code int, message string, data []byte) []byte {
	dst = s.appendHead(dst, id)
	dst = append(dst, `,"error":{"code":`...)
	dst = strconv.AppendInt(dst, int64(code), 10)
	dst = append(dst, `,"message":`...)
	dst = AppendJSONString(dst, message)
	if len(data) > 0 {
		dst = append(dst, `,"data":`...)
		dst = append(dst, data...)
	}
	return append(dst, "}}"...)
}

func (s *rpcServer) appendHead(dst, id []byte) []byte {
	if len(id) == 0 {
		id = nullID
	}
	return append(append(dst, s.head...), id...)
}

// parse reads a frame of one request or a batch array of them; op fills
// in what each request does from its method and params.
func (s *rpcServer) parse(dst []Incoming, frame []byte, op func(*Incoming)) ([]Incoming, bool, *RequestError) {
	frame = bytes.TrimSpace(frame)
	if len(frame) == 0 || frame[0] != '[' {
		var req Incoming
		if !readRequest(&req, frame, op) {
			return dst, false, &RequestError{Code: CodeParseError, Message: "parse error"}
		}
		return append(dst, req), false, nil
	}
	var elems []json.RawMessage
	if json.Unmarshal(frame, &elems) != nil {
		return dst, true, &RequestError{Code: CodeParseError, Message: "parse error"}
	}
	switch {
	case !s.batches:
		return dst, true, &RequestError{Code: CodeInvalidRequest, Message: "batch requests are not supported"}
	case len(elems) == 0:
		return dst, true, &RequestError{Code: CodeInvalidRequest, Message: "empty batch"}
	}
	for _, e := range elems {
		var req Incoming
		if !readRequest(&req, e, op) {
			req = Incoming{ID: nullID, Err: &RequestError{Code: CodeInvalidRequest, Message: "invalid request"}}
		}
		dst = append(dst, req)
	}
	return dst, true, nil
}

// rpcRequest is a JSON-RPC request as a client writes it.
type rpcRequest struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// readRequest reads one request into req, reporting whether data is a
// JSON object of the request's shape.
func readRequest(req *Incoming, data []byte, op func(*Incoming)) bool {
	var r rpcRequest
	if json.Unmarshal(data, &r) != nil {
		return false
	}
	*req = Incoming{ID: r.ID, Method: r.Method, Params: r.Params}
	if r.Method == "" {
		req.Err = &RequestError{Code: CodeInvalidRequest, Message: "invalid request: no method"}
		return true
	}
	op(req)
	return true
}
