package protocol

import (
	"encoding/json"
	"fmt"
	"time"
)

// Server is the server half of a dialect: what an exchange, a node or the
// sidecar reads from its clients and writes back to them. It mirrors
// Protocol: a frame a Server writes classifies, with the Protocol of the
// same name, as the kind, id, key and payload it was written with, and a
// request a Protocol encodes parses, with ParseFrame, as the method, id
// and topics it was encoded with.
//
// The Append methods append to dst and allocate only when dst is too
// small; methods answering requests append nothing where the dialect has
// no responses (Ethereal). Implementations are stateless and safe for
// concurrent use.
type Server interface {
	// Name is the dialect's name, as ServerByName and ByName take it.
	Name() string
	// RPC reports whether the dialect has request ids and responses.
	// Ethereal has neither: its servers answer nothing.
	RPC() bool
	// Batches reports whether a client may send a JSON-RPC batch array
	// (Thalex, Ethereum); ParseFrame refuses one where it may not.
	Batches() bool
	// Private reports whether topic needs an authenticated connection
	// (Thalex account.* and session.*, Deribit user.*).
	Private(topic string) bool
	// SubscriptionID returns a new subscription id where the server
	// assigns one to every subscription and its notifications carry that
	// id instead of the topic (Ethereum: "0x" and 32 hex digits); "" for
	// the other dialects.
	SubscriptionID() string

	// ParseFrame reads a text frame from a client and appends its
	// requests to dst: one, or every element of a batch array (batch is
	// then true). An element that is not a request is kept with its Err
	// set and a null ID, so it is answered in its place. err is a frame
	// that cannot be served at all: not JSON, a batch where the dialect
	// allows none, an empty batch; answer it with a null id.
	ParseFrame(dst []Incoming, frame []byte) (reqs []Incoming, batch bool, err *Error)

	// AppendResult appends the response to request id (raw JSON; nil is
	// null) carrying result (raw JSON).
	AppendResult(dst, id, result []byte) []byte
	// AppendError appends the error response to request id with code,
	// message and data (raw JSON; nil for none).
	AppendError(dst, id []byte, code int, message string, data []byte) []byte
	// AppendSubscribed appends the result of a subscribe request that
	// subscribed keys, the routing keys Protocol.Ack reads back: the
	// accepted channels (Thalex, Deribit), or the one subscription id
	// (Ethereum).
	AppendSubscribed(dst []byte, keys []string) []byte
	// AppendUnsubscribed appends the result of an unsubscribe request
	// that removed keys: the channels (Thalex, Deribit), or whether the
	// one subscription id was removed (Ethereum: true or false).
	AppendUnsubscribed(dst []byte, keys []string) []byte

	// AppendNotification appends the notification that publishes data on
	// topic; subID is the subscription's id where SubscriptionID assigns
	// one. data becomes the Thalex "notification", the Deribit
	// "params.data", the Ethereum "params.result", or the Ethereal "data"
	// of an event stamped with the current time.
	AppendNotification(dst []byte, topic, subID string, data []byte) []byte
	// Envelope returns what goes before and after the payload of a
	// notification received from upstream (Frame.Data) to send it on
	// unchanged: prefix + Frame.Data + suffix is the notification of
	// topic (or subID). Ethereal's payload is the whole frame, so both are
	// empty. Encode it once per topic; it allocates.
	Envelope(topic, subID string) (prefix, suffix []byte)
	// SnapshotEnvelope is Envelope for a message the exchange marks as
	// whole state where the mark is outside the payload (Thalex's
	// top-level "snapshot": true); elsewhere the same as Envelope.
	SnapshotEnvelope(topic, subID string) (prefix, suffix []byte)
	// AppendSnapshotNotification is AppendNotification for a message the
	// exchange marks as whole state (a book's first message).
	AppendSnapshotNotification(dst []byte, topic, subID string, data []byte) []byte
	// AppendHeartbeat appends a request for a liveness answer that the
	// client must make at once (Deribit's test_request); the other
	// dialects have none and append nothing.
	AppendHeartbeat(dst []byte) []byte
	// AppendReconnectNotice appends the notice that the server will close
	// the connection soon (Thalex's system channel); the other dialects
	// have none and append nothing.
	AppendReconnectNotice(dst []byte) []byte
	// AnswerKeepalive returns the answer to frame when frame is the
	// client's keepalive (Venue.Keepalive), which is no request of the
	// dialect; ok is false for any other frame. It runs before ParseFrame
	// on every frame a client sends. pkg/exchangetest answers so; the
	// sidecar answers its local clients' keepalives itself, as the venue
	// would.
	AnswerKeepalive(frame []byte) (answer []byte, ok bool)
	// Venue is what the venue is: the same value as the Protocol's of
	// the same name (its idle limit, whether it answers every request).
	Venue() Venue
}

// Incoming is one request from a client, as Server.ParseFrame reads it.
type Incoming struct {
	// ID is the request id as raw JSON; nil when the request has none (a
	// JSON-RPC notification, an Ethereal event), which gets no answer.
	ID []byte
	// Method is the JSON-RPC method, or the Ethereal event.
	Method string
	// Params is the JSON-RPC params as raw JSON; nil when absent and for
	// Ethereal.
	Params []byte
	// Op is what the request asks of the server's dialect machinery.
	Op Op
	// Private is set for the private/ methods (Thalex, Deribit), which
	// need an authenticated connection.
	Private bool
	// Credential is the credential the request carries in itself, where
	// the venue has no login method and each private request names its
	// session (Kraken's token in a private subscribe's or an order's
	// params); nil for none. A server checks it with its login's
	// Authenticate before serving the request.
	Credential []byte
	// Topics are what an OpSubscribe subscribes, as Protocol.NewTopic
	// names them, or what an OpUnsubscribe removes, as routing keys: the
	// topics, or an Ethereum subscription id.
	Topics []string
	// Interval is an OpHeartbeat's heartbeat interval; 0 stops them.
	Interval time.Duration
	// Err, when set, is why the request is invalid: answer it with
	// AppendError instead of serving it.
	Err *Error
}

// Op is what a request asks of the server beyond a method call.
type Op uint8

const (
	// OpCall is any other request: a method the server answers itself
	// or forwards.
	OpCall Op = iota
	// OpSubscribe subscribes Incoming.Topics.
	OpSubscribe
	// OpUnsubscribe removes the subscriptions Incoming.Topics names.
	OpUnsubscribe
	// OpUnsubscribeAll removes every subscription of the connection
	// (Thalex and Deribit public/unsubscribe_all).
	OpUnsubscribeAll
	// OpHeartbeat sets the interval of the server's heartbeats, or stops
	// them (Deribit public/set_heartbeat, public/disable_heartbeat).
	OpHeartbeat
	// OpHeartbeatReply answers a heartbeat (Deribit public/test).
	OpHeartbeatReply
)

var opNames = [...]string{"call", "subscribe", "unsubscribe", "unsubscribe_all", "heartbeat", "heartbeat_reply"}

func (o Op) String() string {
	if int(o) < len(opNames) {
		return opNames[o]
	}
	return fmt.Sprintf("Op(%d)", o)
}

// ErrSubscriptionNotFound is what geth answers an eth_unsubscribe of an
// id the connection does not hold (go-ethereum rpc/handler.go,
// unsubscribe; its default error code).
var ErrSubscriptionNotFound = &Error{Code: -32000, Message: "subscription not found"}

// Error is a JSON-RPC error object, the one error type of the wire: what
// a server half refuses a frame or a request with (ParseFrame, a login, a
// throttle), and what a client gets back in place of a result
// (client.RPCError is this type).
type Error struct {
	Code    int             `json:"code"`           // the error's code, as the server sent it
	Message string          `json:"message"`        // the server's message
	Data    json.RawMessage `json:"data,omitempty"` // the error's data member, raw JSON; nil when absent
}

// NewError is an Error whose data member is data encoded by
// encoding/json (left out when nil, or when it does not encode).
func NewError(code int, message string, data any) *Error {
	e := &Error{Code: code, Message: message}
	if data != nil {
		e.Data, _ = json.Marshal(data)
	}
	return e
}

func (e *Error) Error() string {
	if e.Code == 0 && len(e.Data) == 0 { // a named code (Ethereal) or a malformed error object
		return "rpc error: " + e.Message
	}
	if len(e.Data) > 0 {
		return fmt.Sprintf("rpc error %d: %s (%s)", e.Code, e.Message, e.Data)
	}
	return fmt.Sprintf("rpc error %d: %s", e.Code, e.Message)
}
