package sidecar

import (
	"encoding/json"
	"time"
)

// heartbeatMethod answers Deribit's heartbeat methods locally: the
// upstream heartbeat belongs to the sidecar's own connection.
func (c *wsConn) heartbeatMethod(req *request) ([]byte, bool) {
	d := c.cfg.dialect
	switch req.Method {
	case "public/set_heartbeat":
		var p struct {
			Interval float64 `json:"interval"`
		}
		if json.Unmarshal(req.Params, &p) != nil || p.Interval <= 0 {
			return d.appendError(nil, req.ID, codeInvalidParams, "invalid params: want {\"interval\":N}", nil), true
		}
		c.startHeartbeat(time.Duration(p.Interval * float64(time.Second)))
		return d.appendResult(nil, req.ID, []byte(`"ok"`)), true
	case "public/disable_heartbeat":
		c.stopHeartbeat()
		return d.appendResult(nil, req.ID, []byte(`"ok"`)), true
	case "public/test":
		return d.appendResult(nil, req.ID, []byte(`{"version":"wsfan-sidecar"}`)), true
	}
	return nil, false
}

var testRequest = []byte(`{"jsonrpc":"2.0","method":"heartbeat","params":{"type":"test_request"}}`)

// startHeartbeat sends Deribit test requests every d, like the exchange.
func (c *wsConn) startHeartbeat(d time.Duration) {
	c.hbMu.Lock()
	defer c.hbMu.Unlock()
	if c.hb != nil {
		c.hb.Stop()
	}
	var tick func()
	tick = func() {
		c.hbMu.Lock()
		defer c.hbMu.Unlock()
		if c.hb == nil {
			return
		}
		c.s.reply(textFrame(testRequest))
		c.hb = time.AfterFunc(d, tick)
	}
	c.hb = time.AfterFunc(d, tick)
}

func (c *wsConn) stopHeartbeat() {
	c.hbMu.Lock()
	defer c.hbMu.Unlock()
	if c.hb != nil {
		c.hb.Stop()
		c.hb = nil
	}
}
