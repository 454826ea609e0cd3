package exchangetest

import (
	"time"

	"github.com/wsfan/wsfan/pkg/protocol"
)

// builtin answers the requests the server serves itself, whatever the
// exchange: subscriptions (channel lists, or one id a subscription where
// the server half assigns ids), the heartbeat a client asks for and its
// replies, and the exchange's login method. ok is false for any other
// request. It runs on c's reader goroutine and may append to c.after.
func builtin(c *conn, req *protocol.Incoming, received time.Time) (result any, rerr *protocol.Error, ok bool) {
	s := c.s
	switch req.Op {
	case protocol.OpSubscribe, protocol.OpUnsubscribe:
		if s.wire.SubscriptionID() != "" {
			return subscribeIDs(c, req)
		}
		return channelRequest(c, req)
	case protocol.OpHeartbeat:
		d := req.Interval
		c.after = append(c.after, func() []byte { c.setHeartbeat(d); return nil })
		return "ok", nil, true
	case protocol.OpHeartbeatReply:
		c.awaitingTest.Store(false)
		if m := s.ex.Methods[req.Method]; m != nil {
			return m(nil, received), nil, true
		}
		return "ok", nil, true
	}
	if s.login != nil && req.Method == s.login.Method() {
		return authenticate(c, req)
	}
	return nil, nil, false
}

// authenticate runs the exchange's login on c's reader goroutine: a
// success logs the connection in for the lifetime the login gives.
func authenticate(c *conn, req *protocol.Incoming) (any, *protocol.Error, bool) {
	now := c.s.cfg.now()
	result, lifetime, err := c.s.login.Authenticate(c.id, req.Params, now)
	if err != nil {
		return nil, err, true
	}
	c.login = login{ok: true}
	if lifetime > 0 {
		c.login.expires = now.Add(lifetime)
	}
	return result, nil, true
}

// carried checks the credential req carries in itself
// (protocol.Incoming.Credential: Kraken's token) with the exchange's
// login, on c's reader goroutine: one it accepts logs the connection in
// as a login method would; it returns the refusal of one it refuses, or
// of any on a server without a login, leaving the connection as it was.
func carried(c *conn, req *protocol.Incoming) *protocol.Error {
	if c.s.login == nil {
		return errMethodNotFound
	}
	_, err, _ := authenticate(c, &protocol.Incoming{Params: req.Credential})
	return err
}
