package client

import (
	"cmp"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/wsfan/wsfan/internal/format"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// Sentinel errors. Every error the client returns wraps one of these or is
// an *RPCError, so errors.Is and errors.As work through the wrapping.
//
// An error names the package once: the sentinels (and RefusedError) say
// "wsfan:", the operations that wrap them say only what failed, so a
// call on a closed client reads "call public/get_time: wsfan: client
// closed".
var (
	// ErrClosed: the client was closed.
	ErrClosed = errors.New("wsfan: client closed")
	// ErrConnectionLost: the connection dropped (or was not up) while the
	// operation needed it. Subscriptions survive it; calls do not.
	ErrConnectionLost = errors.New("wsfan: connection lost")
	// ErrSlowConsumer: a subscription under the CloseSubscription policy
	// was ended because its buffer was full.
	ErrSlowConsumer = errors.New("wsfan: slow consumer")
	// ErrTimeout: the server did not answer within the request timeout.
	ErrTimeout = errors.New("wsfan: request timed out")
	// ErrRefused: the server refused a topic.
	ErrRefused = errors.New("wsfan: subscription refused")
	// ErrUnsubscribed: the subscription was already ended.
	ErrUnsubscribed = errors.New("wsfan: subscription already ended")
	// ErrDeadPeer: no pong or no frame arrived in time; the connection was
	// dropped and is being replaced.
	ErrDeadPeer = errors.New("wsfan: peer stopped answering")
	// ErrServerReconnect: the server announced that it will close the
	// connection (Thalex's system reconnect notice).
	ErrServerReconnect = errors.New("wsfan: server asked the client to reconnect")
	// ErrLoginRefused: the server refused the on-connect hook's login. A
	// hook says so by returning an error that wraps it (thalex.Login and
	// deribit.Login do, around the server's *RPCError). On a reconnect the
	// client keeps the connection, restores the public topics and ends
	// every subscription holding a private topic with the error; Dial
	// fails with it.
	ErrLoginRefused = errors.New("wsfan: login refused")
)

// RPCError is an error object the server returned in place of a result:
// protocol.Error, the wire's one error type, under the name a caller of
// Call looks for (errors.As(err, &rpcErr) with rpcErr *client.RPCError).
type RPCError = protocol.Error

// parseRPCError decodes an error object: JSON-RPC's {"code":int,
// "message":…}; or one whose code is a string (OKX's event frames,
// {"event":"error","code":"60012","msg":…}: a code of digits is that
// number, and msg is the message); or a status refusal whose code is a
// name (Ethereal's {"ok":false,"code":"SUBSCRIPTION_LIMIT_EXCEEDED"}),
// which becomes the Message with Code 0; or a frame whose "error" is a
// string, the refusal's text alone (Kraken's {"error":"EOrder:Insufficient
// funds","success":false,…}), which becomes the Message with Code 0. A
// malformed one still yields an *RPCError carrying the raw text.
func parseRPCError(raw []byte) *RPCError {
	e := new(RPCError)
	if err := decodeInPlace(copying, raw, e); err == nil && (e.Code != 0 || e.Message != "") {
		return e
	}
	var status struct {
		Code    string          `json:"code"`
		Message string          `json:"message"`
		Msg     string          `json:"msg"`
		Error   json.RawMessage `json:"error"`
	}
	err := decodeInPlace(copying, raw, &status)
	var text string
	if err == nil && status.Code == "" && len(status.Error) > 0 && json.Unmarshal(status.Error, &text) == nil && text != "" {
		return &RPCError{Message: text} // a refusal that is its text alone (Kraken)
	}
	if err == nil && status.Code != "" {
		msg := cmp.Or(status.Message, status.Msg)
		if code, err := strconv.Atoi(status.Code); err == nil && code != 0 {
			return &RPCError{Code: code, Message: msg}
		}
		if msg != "" {
			msg = status.Code + ": " + msg
		} else {
			msg = status.Code
		}
		return &RPCError{Message: msg}
	}
	return &RPCError{Code: 0, Message: "malformed error object: " + truncate(raw, 200)}
}

// RefusedError names the topics the server refused.
type RefusedError struct {
	Topics []string // the topics the server refused
	// Cause is the server's error, when it sent one.
	Cause error
}

func (e *RefusedError) Error() string {
	msg := "wsfan: server refused " + format.QuotedList(e.Topics)
	if e.Cause != nil {
		msg += ": " + e.Cause.Error()
	}
	return msg
}

// Is makes errors.Is(err, ErrRefused) true.
func (e *RefusedError) Is(target error) bool { return target == ErrRefused }

// Unwrap returns the server's error.
func (e *RefusedError) Unwrap() error { return e.Cause }

func truncate(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}
