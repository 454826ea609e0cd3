package exchangetest

import (
	"time"

	"github.com/wsfan/wsfan/pkg/deribit"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// deribitExchange is Deribit: channel subscriptions, public/auth,
// heartbeats, responses stamped with usIn/usOut/usDiff/testnet, and error
// 10028 for a request over the limit.
type deribitExchange struct{}

func (deribitExchange) builtin(c *conn, req *protocol.Incoming) (any, *RPCError, bool) {
	switch {
	case req.Op == protocol.OpHeartbeat:
		d := req.Interval
		c.after = append(c.after, func() { c.setHeartbeat(d) })
		return "ok", nil, true
	case req.Op == protocol.OpHeartbeatReply:
		c.awaitingTest.Store(false)
		return map[string]string{"version": "1.2.26"}, nil, true
	case req.Method == "public/auth":
		res, err := deribitAuth(c, req)
		return res, err, true
	}
	return channelRequest(c, req)
}

func (deribitExchange) appendResult(dst, id, result []byte, received time.Time) []byte {
	return deribit.AppendResult(dst, id, result, received, time.Now(), true)
}

func (deribitExchange) throttled() *RPCError {
	return &RPCError{Code: 10028, Message: "too_many_requests"}
}
