package exchangetest

import (
	"strconv"
	"time"
)

// deribitDialect speaks Deribit's JSON-RPC v2: "jsonrpc":"2.0" everywhere,
// responses with usIn/usOut/usDiff/testnet after the result, notifications
// {"jsonrpc":"2.0","method":"subscription","params":{"channel":T,"data":DATA}},
// heartbeats, no batch arrays.
type deribitDialect struct{}

var deribitPrivate = []string{"user."}

func (d deribitDialect) handleText(c *conn, msg []byte) { serveRPC(c, d, msg) }

func (deribitDialect) perConn() bool { return false }

func (deribitDialect) batch() bool { return false }

func (deribitDialect) appendNotification(dst []byte, topic, _ string, data []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","method":"subscription","params":{"channel":`...)
	dst = appendJSONString(dst, topic)
	dst = append(dst, `,"data":`...)
	dst = append(dst, data...)
	return append(dst, "}}"...)
}

func (deribitDialect) appendResult(dst []byte, id, result []byte, received time.Time) []byte {
	usIn := received.UnixMicro()
	usOut := time.Now().UnixMicro()
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = append(dst, id...)
	dst = append(dst, `,"result":`...)
	dst = append(dst, result...)
	dst = append(dst, `,"usIn":`...)
	dst = strconv.AppendInt(dst, usIn, 10)
	dst = append(dst, `,"usOut":`...)
	dst = strconv.AppendInt(dst, usOut, 10)
	dst = append(dst, `,"usDiff":`...)
	dst = strconv.AppendInt(dst, usOut-usIn, 10)
	return append(dst, `,"testnet":true}`...)
}

func (deribitDialect) appendError(dst []byte, id []byte, e *RPCError) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = append(dst, id...)
	dst = append(dst, `,"error":`...)
	dst = appendErrorObject(dst, e)
	return append(dst, '}')
}

func (deribitDialect) builtin(c *conn, req *request) (any, *RPCError, bool) {
	switch req.Method {
	case "public/subscribe":
		res, err := subscribeChannels(c, req, false, deribitPrivate...)
		return res, err, true
	case "private/subscribe":
		res, err := subscribeChannels(c, req, true, deribitPrivate...)
		return res, err, true
	case "public/unsubscribe", "private/unsubscribe":
		res, err := unsubscribeChannels(c, req)
		return res, err, true
	case "public/auth":
		res, err := deribitAuth(c, req)
		return res, err, true
	case "public/set_heartbeat":
		var p struct {
			Interval float64 `json:"interval"`
		}
		if !decodeParams(req, &p) || p.Interval <= 0 {
			return nil, errInvalidParams, true
		}
		d := time.Duration(p.Interval * float64(time.Second))
		c.after = append(c.after, func() { c.setHeartbeat(d) })
		return "ok", nil, true
	case "public/disable_heartbeat":
		c.after = append(c.after, func() { c.setHeartbeat(0) })
		return "ok", nil, true
	case "public/test":
		c.awaitingTest.Store(false)
		return map[string]string{"version": "1.2.26"}, nil, true
	}
	return nil, nil, false
}
