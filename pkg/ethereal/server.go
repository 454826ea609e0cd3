package ethereal

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/wsfan/wsfan/pkg/protocol"
)

// server is Ethereal's stream half: subscribe and unsubscribe
// events without ids, each answered by a status frame without an id,
// {"ok":true} or {"ok":false,"code":CODE}, and notifications
// {"e":TYPE,"t":MS,"data":DATA}.
type server struct{}

// Server returns the server half of the Ethereal dialect.
func Server() protocol.Server { return server{} }

func (server) Name() string           { return Name }
func (server) RPC() bool              { return false }
func (server) Batches() bool          { return false }
func (server) Private(string) bool    { return false }
func (server) SubscriptionID() string { return "" }

// request is a client's frame,
// {"event":"subscribe","data":{"type":"L2Book","symbol":"BTCUSD"}}.
type request struct {
	Event string `json:"event"`
	Data  struct {
		Type         string `json:"type"`
		Symbol       string `json:"symbol"`
		SubaccountID string `json:"subaccountId"`
	} `json:"data"`
}

// ParseFrame reads one event; its topic is "TYPE:SYMBOL" or
// "TYPE:SUBACCOUNT_ID", as NewTopic takes it. A JSON object without an
// event is refused as an invalid request naming this dialect.
func (server) ParseFrame(dst []protocol.Incoming, frame []byte) ([]protocol.Incoming, bool, *protocol.Error) {
	var ev request
	if json.Unmarshal(frame, &ev) != nil {
		return dst, false, &protocol.Error{Code: protocol.CodeParseError, Message: "parse error"}
	}
	req := protocol.Incoming{Method: ev.Event}
	switch ev.Event {
	case "": // not an event: most often another dialect's frame
		req.Err = &protocol.Error{Code: protocol.CodeInvalidRequest, Message: `invalid request: no event; this server speaks the ethereal dialect: {"event":"subscribe","data":{"type":"L2Book","symbol":"BTCUSD"}}`}
		return append(dst, req), false, nil
	case "subscribe":
		req.Op = protocol.OpSubscribe
	case "unsubscribe":
		req.Op = protocol.OpUnsubscribe
	default:
		return append(dst, req), false, nil
	}
	key := ev.Data.Symbol
	if key == "" {
		key = ev.Data.SubaccountID
	}
	if ev.Data.Type == "" || key == "" {
		req.Err = &protocol.Error{Code: protocol.CodeInvalidParams, Message: `invalid params: want {"type":T,"symbol":S} or {"type":T,"subaccountId":ID}`}
	} else {
		req.Topics = []string{ev.Data.Type + ":" + key}
	}
	return append(dst, req), false, nil
}

// AppendResult appends the status frame of an accepted event,
// {"ok":true}: it carries neither id nor result.
func (server) AppendResult(dst, _, _ []byte) []byte { return append(dst, `{"ok":true}`...) }

// AppendError appends the status frame of a refused event,
// {"ok":false,"code":CODE}, with the message beside it when it says more
// than the code. A message that is a code already (upper case, digits and
// underscores: "SUBSCRIPTION_LIMIT_EXCEEDED") is the code; any other is
// coded by its JSON-RPC code (see statusCode).
func (server) AppendError(dst, _ []byte, code int, message string, _ []byte) []byte {
	dst = append(dst, `{"ok":false,"code":`...)
	if isStatusCode(message) {
		dst = protocol.AppendJSONString(dst, message)
		return append(dst, '}')
	}
	dst = protocol.AppendJSONString(dst, statusCode(code))
	dst = append(dst, `,"message":`...)
	dst = protocol.AppendJSONString(dst, message)
	return append(dst, '}')
}

func (server) AppendSubscribed(dst []byte, _ []string) []byte   { return dst }
func (server) AppendUnsubscribed(dst []byte, _ []string) []byte { return dst }
func (server) AppendHeartbeat(dst []byte) []byte                { return dst }
func (server) AppendReconnectNotice(dst []byte) []byte          { return dst }

// Status codes of the refusals Ethereal's servers send. Only
// SubscriptionLimitExceeded is named by the public material (the
// per-connection subscription limit); the others are this package's own
// names for the refusals of a test server or the sidecar.
const (
	SubscriptionLimitExceeded = "SUBSCRIPTION_LIMIT_EXCEEDED"
	// RateLimitIP is the test server's refusal of a subscribe over the
	// WebSocket budget of an IP address. The system-limits page names
	// RATE_LIMIT_IP the answer (an HTTP 429 body's type) when that pool
	// is spent; what a WebSocket subscribe gets then is not documented,
	// and this frame is our assumption.
	RateLimitIP        = "RATE_LIMIT_IP"
	codeInvalidRequest = "INVALID_REQUEST"
	codeRefused        = "SUBSCRIPTION_REFUSED"
)

// statusCode names a JSON-RPC error code as a status code.
func statusCode(code int) string {
	switch code {
	case protocol.CodeParseError, protocol.CodeInvalidParams, protocol.CodeInvalidRequest:
		return codeInvalidRequest
	}
	return codeRefused
}

// isStatusCode reports whether s reads as a status code: upper case
// letters, digits and underscores.
func isStatusCode(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if (r < 'A' || r > 'Z') && (r < '0' || r > '9') && r != '_' {
			return false
		}
	}
	return true
}

// AppendNotification appends the event of topic's type carrying data,
// stamped with the current time.
func (server) AppendNotification(dst []byte, topic, _ string, data []byte) []byte {
	typ, _, _ := strings.Cut(topic, ":")
	dst = append(dst, `{"e":`...)
	dst = protocol.AppendJSONString(dst, typ)
	dst = append(dst, `,"t":`...)
	dst = strconv.AppendInt(dst, time.Now().UnixMilli(), 10)
	dst = append(dst, `,"data":`...)
	dst = append(dst, data...)
	return append(dst, '}')
}

// Envelope is empty: an Ethereal notification's payload is the whole
// frame.
func (server) Envelope(string, string) (prefix, suffix []byte) { return nil, nil }

// AppendSnapshotNotification is AppendNotification: the whole L2Book is
// marked by position.
func (s server) AppendSnapshotNotification(dst []byte, topic, subID string, data []byte) []byte {
	return s.AppendNotification(dst, topic, subID, data)
}

// SnapshotEnvelope is Envelope: the whole L2Book is marked by position.
func (server) SnapshotEnvelope(string, string) (prefix, suffix []byte) { return nil, nil }
