package sidecar

import (
	"time"

	"github.com/wsfan/wsfan/pkg/protocol"
)

// heartbeat answers Deribit's heartbeat requests locally: the upstream
// heartbeat belongs to the sidecar's own connection.
func (c *wsConn) heartbeat(req *protocol.Incoming) []byte {
	w := c.cfg.wire
	if req.Op == protocol.OpHeartbeatReply {
		return w.AppendResult(nil, req.ID, []byte(`{"version":"wsfan-sidecar"}`))
	}
	if req.Interval > 0 {
		c.startHeartbeat(req.Interval)
	} else {
		c.stopHeartbeat()
	}
	return w.AppendResult(nil, req.ID, []byte(`"ok"`))
}

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
		c.s.reply(textFrame(c.cfg.wire.AppendHeartbeat(nil)))
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
