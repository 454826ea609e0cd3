package deribit

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/wsfan/wsfan/pkg/protocol"
)

// A notification up to its channel, and between the channel and the
// payload.
const (
	notificationHead = `{"jsonrpc":"2.0","method":"subscription","params":{"channel":`
	notificationMid  = `,"data":`
)

// server writes JSON-RPC 2.0 responses and notifications
// {"jsonrpc":"2.0","method":"subscription","params":{"channel":T,"data":DATA}},
// sends heartbeats, and takes no batch arrays.
type server struct{ protocol.ChannelServer }

var wire = &server{protocol.ChannelServer{
	RPCServer: protocol.RPCServer{
		DialectName: Name,
		Head:        protocol.RPCHead,
		Note:        protocol.Notification{Head: notificationHead, Mid: notificationMid, Tail: `}}`},
	},
	PrivatePrefixes: privatePrefixes,
}}

// Server returns the server half of the Deribit dialect.
func Server() protocol.Server { return wire }

func (s *server) ParseFrame(dst []protocol.Incoming, frame []byte) ([]protocol.Incoming, bool, *protocol.Error) {
	return s.Parse(dst, frame, op)
}

// op reads the channel methods and the heartbeat ones.
func op(req *protocol.Incoming) {
	switch req.Method {
	case "public/set_heartbeat":
		req.Op = protocol.OpHeartbeat
		var p struct {
			Interval float64 `json:"interval"`
		}
		if len(req.Params) == 0 || json.Unmarshal(req.Params, &p) != nil || !(p.Interval > 0) {
			req.Err = &protocol.Error{Code: protocol.CodeInvalidParams, Message: `invalid params: want {"interval":N}`}
			return
		}
		req.Interval = time.Duration(p.Interval * float64(time.Second))
	case "public/disable_heartbeat":
		req.Op = protocol.OpHeartbeat
	case "public/test":
		req.Op = protocol.OpHeartbeatReply
	default:
		protocol.ChannelOp(req)
	}
}

// AppendHeartbeat appends the test_request, which the client answers with
// public/test.
func (s *server) AppendHeartbeat(dst []byte) []byte {
	return append(dst, `{"jsonrpc":"2.0","method":"heartbeat","params":{"type":"test_request"}}`...)
}

// AppendResult appends a response the way Deribit's exchange writes
// one: AppendResult's, followed by when the request came in and when the
// answer went out (usIn and usOut, in microseconds since the epoch), the
// time between (usDiff), and whether the server is a testnet.
func AppendResult(dst, id, result []byte, in, out time.Time, testnet bool) []byte {
	return appendStamped(wire.OpenResult(dst, id, result), in, out, testnet)
}

// appendStamped closes an open response with Deribit's stamps: usIn,
// usOut, usDiff and testnet.
func appendStamped(dst []byte, in, out time.Time, testnet bool) []byte {
	usIn, usOut := in.UnixMicro(), out.UnixMicro()
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
