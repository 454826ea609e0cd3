package sidecar

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
)

// forward makes a call upstream with the client's method and params and
// returns the response with the client's own id put back: the upstream
// request carries the upstream client's id, so ids of different local
// clients never collide. It waits for the upstream to be connected, but
// never retries a call that may have been sent. ctx ends when the client's
// reader does.
func (c *wsConn) forward(ctx context.Context, id json.RawMessage, method string, params json.RawMessage) []byte {
	d := c.srv.dialect
	c.srv.stats.calls.Add(1)
	ctx, cancel := context.WithTimeout(ctx, c.srv.cfg.RequestTimeout)
	defer cancel()
	if p := bytes.TrimSpace(params); bytes.Equal(p, []byte("null")) {
		params = nil
	}
	up, err := c.srv.up.connected(ctx)
	if err == nil {
		var res []byte
		if res, err = up.CallRaw(ctx, method, params); err == nil {
			return d.appendResult(nil, id, res)
		}
	}
	c.srv.stats.callErrors.Add(1)
	if len(id) == 0 {
		return nil
	}
	return errorResponse(d, id, fmt.Errorf("sidecar: %w", err))
}
