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

// deribitAuth is the result of public/auth.
type deribitAuth struct {
	AccessToken  string `json:"access_token"`
	ExpiresIn    int    `json:"expires_in"`
	RefreshToken string `json:"refresh_token"`
	TokenType    string `json:"token_type"`
	Scope        string `json:"scope"`
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
		var p struct {
			GrantType    string `json:"grant_type"`
			ClientID     string `json:"client_id"`
			ClientSecret string `json:"client_secret"`
		}
		decodeParams(req, &p)
		if !checkLogin(c, p.ClientID, p.ClientSecret) {
			return nil, &RPCError{Code: 13004, Message: "invalid_credentials"}, true
		}
		return deribitAuth{
			AccessToken:  "exchangetest-access-" + strconv.Itoa(c.id),
			ExpiresIn:    900,
			RefreshToken: "exchangetest-refresh-" + strconv.Itoa(c.id),
			TokenType:    "bearer",
			Scope:        "connection mainaccount",
		}, nil, true
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
