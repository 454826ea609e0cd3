package exchangetest

import "time"

// thalexDialect speaks Thalex's JSON-RPC: responses {"id":N,"result":R}
// without "jsonrpc", notifications {"channel_name":T,"notification":DATA}.
type thalexDialect struct{}

var thalexPrivate = []string{"account.", "session."}

func (d thalexDialect) handleText(c *conn, msg []byte) { serveRPC(c, d, msg) }

func (thalexDialect) perConn() bool { return false }

func (thalexDialect) batch() bool { return true }

func (thalexDialect) appendNotification(dst []byte, topic, _ string, data []byte) []byte {
	dst = append(dst, `{"channel_name":`...)
	dst = appendJSONString(dst, topic)
	dst = append(dst, `,"notification":`...)
	dst = append(dst, data...)
	return append(dst, '}')
}

func (thalexDialect) appendResult(dst []byte, id, result []byte, _ time.Time) []byte {
	dst = append(dst, `{"id":`...)
	dst = append(dst, id...)
	dst = append(dst, `,"result":`...)
	dst = append(dst, result...)
	return append(dst, '}')
}

func (thalexDialect) appendError(dst []byte, id []byte, e *RPCError) []byte {
	dst = append(dst, `{"id":`...)
	dst = append(dst, id...)
	dst = append(dst, `,"error":`...)
	dst = appendErrorObject(dst, e)
	return append(dst, '}')
}

func (thalexDialect) builtin(c *conn, req *request) (any, *RPCError, bool) {
	switch req.Method {
	case "public/subscribe":
		res, err := subscribeChannels(c, req, false, thalexPrivate...)
		return res, err, true
	case "private/subscribe":
		res, err := subscribeChannels(c, req, true, thalexPrivate...)
		return res, err, true
	case "public/unsubscribe", "private/unsubscribe":
		res, err := unsubscribeChannels(c, req)
		return res, err, true
	case "public/login":
		res, err := thalexLogin(c, req)
		return res, err, true
	}
	return nil, nil, false
}
