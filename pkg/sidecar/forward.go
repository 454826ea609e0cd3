package sidecar

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/wsfan/wsfan/pkg/client"
)

// errShuttingDown answers the calls still in flight when a drain has
// waited for them long enough, and the calls that come during a drain.
var errShuttingDown = errors.New("the sidecar is shutting down: the call was not answered in time")

// errNotRetried wraps a forwarded call's failure when the upstream
// connection was lost under it, or was down when it came.
var errNotRetried = errors.New("the upstream connection was lost and the call was not retried")

// forward makes a call upstream with the client's method and params and
// returns the response with the client's own id put back: the upstream
// request carries the upstream client's id, so ids of different local
// clients never collide. A call is never made again on a new connection,
// read-only or not (the upstream client is dialled with
// client.WithReadOnlyRetry(false)): the sidecar cannot know the deadline
// of the program that made it, which may have given up long before, so a
// connection lost under it answers it at once with an error saying so,
// and the program decides. The local connection stays open. ctx ends
// when the client's reader does. With tracing on (Config.TracerProvider)
// the call is a span, sidecar.forward, with the upstream call its child,
// upstream.call, under the client's traceparent when it sent one.
func (c *wsConn) forward(ctx context.Context, id []byte, method string, params []byte) []byte {
	w := c.cfg.wire
	ctx, cancel := context.WithTimeout(ctx, c.cfg.RequestTimeout)
	defer cancel()
	if p := bytes.TrimSpace(params); bytes.Equal(p, []byte("null")) {
		params = nil
	}
	rpcMethod := attribute.String("rpc.method", method)
	ctx, span := c.cfg.tracer.start(ctx, c.s.trace, "sidecar.forward", trace.SpanKindServer, rpcMethod, nil)
	var res json.RawMessage
	f, err := c.cfg.feed(ctx)
	if err == nil {
		callCtx, call := c.cfg.tracer.start(ctx, trace.SpanContext{}, "upstream.call", trace.SpanKindClient, rpcMethod, nil)
		res, err = f.CallRaw(callCtx, method, params)
		end(call, err)
	} else {
		err = fmt.Errorf("call %s: %w", method, err)
	}
	res, err = c.cfg.stats.countCall(res, err)
	end(span, err)
	if err == nil {
		return w.AppendResult(nil, id, res)
	}
	if cause := context.Cause(ctx); errors.Is(cause, errShuttingDown) {
		err = cause
	} else if errors.Is(err, client.ErrConnectionLost) {
		err = fmt.Errorf("%w: %w", errNotRetried, err)
	}
	if len(id) == 0 {
		return nil
	}
	return errorResponse(w, id, err)
}
