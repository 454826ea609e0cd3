package exchangetest

import (
	"time"

	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// thalexExchange is Thalex: channel subscriptions, public/login, and
// error 4 for a request over the limit.
type thalexExchange struct{}

func (thalexExchange) builtin(c *conn, req *protocol.Incoming) (any, *RPCError, bool) {
	if req.Method == "public/login" {
		res, err := thalexLogin(c, req)
		return res, err, true
	}
	return channelRequest(c, req)
}

func (thalexExchange) appendResult(dst, id, result []byte, _ time.Time) []byte {
	return thalex.Server().AppendResult(dst, id, result)
}

func (thalexExchange) throttled() *RPCError {
	return &RPCError{Code: 4, Message: "throttle exceeded"}
}
