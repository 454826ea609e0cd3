package protocol

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"
)

// channelServer is the server half of the channel dialects, Thalex and
// Deribit: topics are channel names, subscribed in lists by
// public/subscribe (private/subscribe for private channels) and
// acknowledged with the list of accepted channels.
type channelServer struct {
	rpcServer
	private []string // prefixes of the private channels
}

func (s *channelServer) Private(topic string) bool { return isPrivate(topic, s.private) }

func (s *channelServer) AppendSubscribed(dst []byte, keys []string) []byte {
	return appendJSONStrings(dst, keys)
}

func (s *channelServer) AppendUnsubscribed(dst []byte, keys []string) []byte {
	return appendJSONStrings(dst, keys)
}

func (s *channelServer) AppendNotification(dst []byte, topic, _ string, data []byte) []byte {
	return s.note.appendTo(dst, topic, data)
}

func (s *channelServer) Envelope(topic, _ string) (prefix, suffix []byte) {
	return s.note.envelope(topic)
}

// channelOp reads the subscription methods of the channel dialects:
// public/ and private/ subscribe, unsubscribe and unsubscribe_all.
func channelOp(req *Incoming) {
	scope, verb, _ := strings.Cut(req.Method, "/")
	if scope != "public" && scope != "private" {
		return
	}
	switch verb {
	case "subscribe":
		req.Op = OpSubscribe
	case "unsubscribe":
		req.Op = OpUnsubscribe
	case "unsubscribe_all":
		req.Op = OpUnsubscribeAll
	default:
		return
	}
	req.Private = scope == "private"
	if req.Op == OpUnsubscribeAll {
		return
	}
	var p struct {
		Channels []string `json:"channels"`
	}
	if len(req.Params) == 0 || json.Unmarshal(req.Params, &p) != nil {
		req.Err = &RequestError{Code: CodeInvalidParams, Message: `invalid params: want {"channels":[...]}`}
		return
	}
	req.Topics = p.Channels
}

// The notifications of Thalex and Deribit up to their channel, and between
// the channel and the payload.
const (
	thalexNotificationHead  = `{"channel_name":`
	thalexNotificationMid   = `,"notification":`
	deribitNotificationHead = `{"jsonrpc":"2.0","method":"subscription","params":{"channel":`
	deribitNotificationMid  = `,"data":`
)

// thalexServer writes responses without "jsonrpc" and notifications
// {"channel_name":T,"notification":DATA}, and takes batch arrays.
type thalexServer struct{ channelServer }

var thalexWire = &thalexServer{channelServer{
	rpcServer: rpcServer{
		name:    "thalex",
		head:    `{"id":`,
		batches: true,
		note:    notification{head: thalexNotificationHead, mid: thalexNotificationMid, tail: `}`},
	},
	private: thalexPrivate,
}}

// ThalexServer returns the server half of the Thalex dialect.
func ThalexServer() Server { return thalexWire }

func (s *thalexServer) ParseFrame(dst []Incoming, frame []byte) ([]Incoming, bool, *RequestError) {
	return s.parse(dst, frame, channelOp)
}

// AppendReconnectNotice appends the system channel's reconnect event.
func (s *thalexServer) AppendReconnectNotice(dst []byte) []byte {
	return s.note.appendTo(dst, thalexSystemChannel, []byte(`{"event":"reconnect"}`))
}

// deribitServer writes JSON-RPC 2.0 responses and notifications
// {"jsonrpc":"2.0","method":"subscription","params":{"channel":T,"data":DATA}},
// sends heartbeats, and takes no batch arrays.
type deribitServer struct{ channelServer }

var deribitWire = &deribitServer{channelServer{
	rpcServer: rpcServer{
		name: "deribit",
		head: rpcHead,
		note: notification{head: deribitNotificationHead, mid: deribitNotificationMid, tail: `}}`},
	},
	private: deribitPrivate,
}}

// DeribitServer returns the server half of the Deribit dialect.
func DeribitServer() Server { return deribitWire }

func (s *deribitServer) ParseFrame(dst []Incoming, frame []byte) ([]Incoming, bool, *RequestError) {
	return s.parse(dst, frame, deribitOp)
}

// deribitOp reads the channel methods and the heartbeat ones.
func deribitOp(req *Incoming) {
	switch req.Method {
	case "public/set_heartbeat":
		req.Op = OpHeartbeat
		var p struct {
			Interval float64 `json:"interval"`
		}
		if len(req.Params) == 0 || json.Unmarshal(req.Params, &p) != nil || !(p.Interval > 0) {
			req.Err = &RequestError{Code: CodeInvalidParams, Message: `invalid params: want {"interval":N}`}
			return
		}
		req.Interval = time.Duration(p.Interval * float64(time.Second))
	case "public/disable_heartbeat":
		req.Op = OpHeartbeat
	case "public/test":
		req.Op = OpHeartbeatReply
	default:
		channelOp(req)
	}
}

// AppendHeartbeat appends the test_request, which the client answers with
// public/test.
func (s *deribitServer) AppendHeartbeat(dst []byte) []byte {
	return append(dst, `{"jsonrpc":"2.0","method":"heartbeat","params":{"type":"test_request"}}`...)
}

// AppendDeribitResult appends a response the way Deribit's exchange writes
// one: AppendResult's, followed by when the request came in and when the
// answer went out (usIn and usOut, in microseconds since the epoch), the
// time between (usDiff), and whether the server is a testnet.
func AppendDeribitResult(dst, id, result []byte, in, out time.Time, testnet bool) []byte {
	usIn, usOut := in.UnixMicro(), out.UnixMicro()
	dst = deribitWire.openResult(dst, id, result)
	dst = append(dst, `,"usIn":`...)
	dst = strconv.AppendInt(dst, usIn, 10)
	dst = append(dst, `,"usOut":`...)
	dst = strconv.AppendInt(dst, usOut, 10)
	dst = append(dst, `,"usDiff":`...)
	dst = strconv.AppendInt(dst, usOut-usIn, 10)
	dst = append(dst, `,"testnet":`...)
	dst = strconv.AppendBool(dst, testnet)
	return append(dst, '}')
}
