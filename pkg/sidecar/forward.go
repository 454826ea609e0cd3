package sidecar

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// errShuttingDown answers the calls still in flight when a drain has
// waited for them long enough, and the calls that come during a drain.
var errShuttingDown = errors.New("the sidecar is shutting down: the call was not answered in time")

// forward makes a call upstream with the client's method and params and
// returns the response with the client's own id put back: the upstream
// request carries the upstream client's id, so ids of different local
// clients never collide. It waits for the upstream to be connected, but
// never retries a call that may have been sent. ctx ends when the client's
// reader does.
func (c *wsConn) forward(ctx context.Context, id []byte, method string, params []byte) []byte {
	w := c.cfg.wire
	ctx, cancel := context.WithTimeout(ctx, c.cfg.RequestTimeout)
	defer cancel()
	if p := bytes.TrimSpace(params); bytes.Equal(p, []byte("null")) {
		params = nil
	}
	var res json.RawMessage
	f, err := c.cfg.feed(ctx)
	if err == nil {
		res, err = f.CallRaw(ctx, method, params)
	} else {
		err = fmt.Errorf("call %s: %w", method, err)
	}
	if res, err = c.cfg.stats.countCall(res, err); err == nil {
		return w.AppendResult(nil, id, res)
	}
	if cause := context.Cause(ctx); errors.Is(cause, errShuttingDown) {
		err = cause
	}
	if len(id) == 0 {
		return nil
	}
	return errorResponse(w, id, err)
}
