package protocol

import (
	"bytes"
	"encoding/json"
	"fmt"
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

// RPCHead opens a JSON-RPC 2.0 response up to its id.
const RPCHead = `{"jsonrpc":"2.0","id":`

// nullID is the id of a response to a request whose id is unknown.
var nullID = []byte("null")

// RPCServer is the server half the JSON-RPC dialects share: requests
// read with encoding/json (they are not the hot path), responses under
// one head, notifications in one layout.
type RPCServer struct {
	DialectName  string // the dialect's name, as Name returns it
	Head         string // a response up to its id
	AllowBatches bool
	Note         Notification
}

// Notification is the layout of a JSON-RPC dialect's Notification: head,
// the routing key as a JSON string, mid, the payload, tail.
type Notification struct {
	Head string // up to the routing key
	Mid  string // between the key and the payload
	Tail string // after the payload
}

// AppendTo appends the notification of key carrying data.
func (n *Notification) AppendTo(dst []byte, key string, data []byte) []byte {
	dst = append(dst, n.Head...)
	dst = AppendJSONString(dst, key)
	dst = append(dst, n.Mid...)
	dst = append(dst, data...)
	return append(dst, n.Tail...)
}

// Envelope returns what goes before and after the payload of key's notification.
func (n *Notification) Envelope(key string) (prefix, suffix []byte) {
	prefix = make([]byte, 0, len(n.Head)+len(key)+2+len(n.Mid))
	prefix = append(AppendJSONString(append(prefix, n.Head...), key), n.Mid...)
	return prefix, []byte(n.Tail)
}

// Name implements Server.
func (s *RPCServer) Name() string { return s.DialectName }

// RPC implements Server: every JSON-RPC dialect takes calls.
func (s *RPCServer) RPC() bool { return true }

// Batches implements Server.
func (s *RPCServer) Batches() bool { return s.AllowBatches }

// Private implements Server: no topic is private unless the dialect says so.
func (s *RPCServer) Private(string) bool { return false }

// SubscriptionID implements Server: none unless the dialect assigns them.
func (s *RPCServer) SubscriptionID() string { return "" }

// AppendHeartbeat implements Server: none unless the dialect has one.
func (s *RPCServer) AppendHeartbeat(dst []byte) []byte { return dst }

// AnswerKeepalive implements Server: the dialect has no keepalive frame
// of its own.
func (s *RPCServer) AnswerKeepalive([]byte) ([]byte, bool) { return nil, false }

// Venue implements Server: the zero Venue; a dialect that documents more
// overrides it.
func (s *RPCServer) Venue() Venue { return Venue{} }

// AppendReconnectNotice implements Server: none unless the dialect has one.
func (s *RPCServer) AppendReconnectNotice(dst []byte) []byte { return dst }

// AppendResult implements Server.
func (s *RPCServer) AppendResult(dst, id, result []byte) []byte {
	return append(s.OpenResult(dst, id, result), '}')
}

// OpenResult appends a response carrying result without its closing
// brace, for a dialect that adds members.
func (s *RPCServer) OpenResult(dst, id, result []byte) []byte {
	dst = s.appendHead(dst, id)
	dst = append(dst, `,"result":`...)
	return append(dst, result...)
}

// AppendError implements Server.
func (s *RPCServer) AppendError(dst, id []byte, code int, message string, data []byte) []byte {
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

func (s *RPCServer) appendHead(dst, id []byte) []byte {
	if len(id) == 0 {
		id = nullID
	}
	return append(append(dst, s.Head...), id...)
}

// Parse reads a frame of one request or a batch array of them; op fills
// in what each request does from its method and params.
func (s *RPCServer) Parse(dst []Incoming, frame []byte, op func(*Incoming)) ([]Incoming, bool, *Error) {
	frame = bytes.TrimSpace(frame)
	if len(frame) == 0 || frame[0] != '[' {
		var req Incoming
		if !s.readRequest(&req, frame, op) {
			return dst, false, &Error{Code: CodeParseError, Message: "parse error"}
		}
		return append(dst, req), false, nil
	}
	var elems []json.RawMessage
	if json.Unmarshal(frame, &elems) != nil {
		return dst, true, &Error{Code: CodeParseError, Message: "parse error"}
	}
	switch {
	case !s.AllowBatches:
		return dst, true, &Error{Code: CodeInvalidRequest, Message: "batch requests are not supported"}
	case len(elems) == 0:
		return dst, true, &Error{Code: CodeInvalidRequest, Message: "empty batch"}
	}
	for _, e := range elems {
		var req Incoming
		if !s.readRequest(&req, e, op) {
			req = Incoming{ID: nullID, Err: s.invalidRequest("not a request object")}
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
// JSON object of the request's shape. An object without a method is
// another dialect's frame more often than a mistake: it is answered (with
// a null id when it has none, as JSON-RPC 2.0 wants an invalid request
// answered) by an error naming the dialect this server speaks.
func (s *RPCServer) readRequest(req *Incoming, data []byte, op func(*Incoming)) bool {
	var r rpcRequest
	if json.Unmarshal(data, &r) != nil {
		return false
	}
	*req = Incoming{ID: r.ID, Method: r.Method, Params: r.Params}
	if r.Method == "" {
		if len(req.ID) == 0 {
			req.ID = nullID
		}
		req.Err = s.invalidRequest("no method")
		return true
	}
	op(req)
	return true
}

// invalidRequest is the refusal of a frame that is not one of this
// dialect's requests, saying why and what the dialect is.
func (s *RPCServer) invalidRequest(why string) *Error {
	return &Error{Code: CodeInvalidRequest, Message: fmt.Sprintf(
		`invalid request: %s; this server speaks the %s dialect, JSON-RPC 2.0: {"jsonrpc":"2.0","id":1,"method":"…","params":…}`,
		why, s.DialectName)}
}
