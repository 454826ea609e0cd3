package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/bytedance/sonic"
	"go.uber.org/zap"

	"github.com/wsfan/wsfan/internal/pending"
)

// Call invokes method with params and decodes the result into result.
// params may be nil, a json.RawMessage or []byte (sent as is), or any
// value sonic can encode; result may be nil (the result is discarded), a
// *json.RawMessage (which shares the read buffer, as Message.Data does),
// or a pointer sonic can decode into (strings are copied, as by
// Message.Decode, so the value keeps no read buffer alive). An error
// object from the server comes back wrapped, naming the method:
// errors.As(err, &rpcErr) finds its *RPCError.
func (c *Client) Call(ctx context.Context, method string, params any, result any) error {
	return callJSON(ctx, method, params, result, c.CallRaw)
}

// callJSON is Call over callRaw: a Client's, a Standby's.
func callJSON(ctx context.Context, method string, params, result any, callRaw func(context.Context, string, json.RawMessage) (json.RawMessage, error)) error {
	var raw []byte
	switch p := params.(type) {
	case nil:
	case json.RawMessage:
		raw = p
	case []byte:
		raw = p
	default:
		var err error
		if raw, err = sonic.Marshal(p); err != nil {
			return fmt.Errorf("failed to encode params of %s: %w", method, err)
		}
	}
	res, err := callRaw(ctx, method, raw)
	if err != nil || result == nil {
		return err
	}
	if rm, ok := result.(*json.RawMessage); ok {
		*rm = res
		return nil
	}
	if err := decodeInPlace(copying, res, result); err != nil {
		return fmt.Errorf("failed to decode result of %s: %w", method, err)
	}
	return nil
}

// CallRaw invokes method with params (JSON, or nil for none) and returns
// the raw "result". The request id is registered before the request is
// written; when ctx ends first the id is dropped and a late response is
// counted as unknown. A call made while the client is reconnecting fails
// at once with ErrConnectionLost: it is never sent late. Under
// WithRateLimit the call first waits for its credits. A call that
// configures the session (cancel-on-disconnect: see
// protocol.MethodClass.Session) is made again on every new connection before
// it is handed out. A call the dialect names read-only
// (protocol.MethodClass.ReadOnly) whose connection dies before its answer is made
// again on the next connection (unless WithReadOnlyRetry turned that
// off); any other fails with ErrConnectionLost.
func (c *Client) CallRaw(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	cn, err := c.activeConn(ctx)
	if err != nil {
		return nil, fmt.Errorf("call %s: %w", method, err)
	}
	if class := c.classifyMethod(method, params); class.IsSession {
		return c.callSetting(ctx, cn, class.Session, method, params)
	}
	res, err := cn.call(ctx, method, params)
	if err != nil && errors.Is(err, ErrConnectionLost) && c.readOnly(method) && ctx.Value(connectingKey{}) == nil {
		// The connection died under a call that only reads: make it
		// again on the next connection (another endpoint's, if it was
		// the endpoint that failed), within ctx and the request timeout.
		wctx, cancel := c.withTimeout(ctx)
		defer cancel()
		if next, werr := c.awaitNewConn(wctx, cn); werr == nil {
			c.log.Info("call made again on the new connection", zap.String("method", method))
			return next.call(wctx, method, params)
		}
	}
	return res, err
}

// call makes one request on this connection. The pending entry, the
// request buffer and the timeout timer are pooled, so a call allocates
// nothing of its own.
func (cn *conn) call(ctx context.Context, method string, params []byte) ([]byte, error) {
	c := cn.c
	if err := paceErr(ctx, c.cfg.pace.Wait(ctx, c.ctx, method)); err != nil {
		return nil, fmt.Errorf("call %s: %w", method, err)
	}
	id := c.nextID()
	buf := getBuffer()
	frame, err := c.proto.AppendRequest((*buf)[:0], id, method, params)
	if err != nil {
		putBuffer(buf)
		return nil, fmt.Errorf("call %s: %w", method, err)
	}
	*buf = frame
	p := pending.Get()
	if err := cn.pending.Add(id, p); err != nil {
		putBuffer(buf)
		pending.Put(p)
		return nil, fmt.Errorf("call %s: %w", method, err)
	}
	start := time.Now()
	if err := cn.send(frame, buf, id); err != nil {
		cn.pending.Remove(id)
		putBuffer(buf)
		pending.Put(p)
		return nil, fmt.Errorf("call %s: %w", method, err)
	}

	// The request timeout applies unless ctx ends sooner.
	var expired <-chan time.Time
	if d, ok := ctx.Deadline(); !ok || time.Until(d) > c.cfg.requestTimeout {
		t := getTimer(c.cfg.requestTimeout)
		defer putTimer(t)
		expired = t.C
	}
	var r pending.Response
	select {
	case r = <-p.Done:
	case <-ctx.Done():
		if cn.pending.Remove(id) {
			cn.unqueue(id) // not sent after its caller gave up
			pending.Put(p)
			return nil, fmt.Errorf("call %s: %w", method, ctxError(ctx, "no response"))
		}
		r = <-p.Done // the reader took it: its answer is on the way
	case <-expired:
		if cn.pending.Remove(id) {
			cn.unqueue(id)
			pending.Put(p)
			return nil, fmt.Errorf("call %s: %w: no response within %v", method, ErrTimeout, c.cfg.requestTimeout)
		}
		r = <-p.Done
	}
	pending.Put(p)
	if c.metrics != nil {
		c.metrics.latency.Observe(time.Since(start).Seconds())
	}
	if r.Err != nil {
		return nil, fmt.Errorf("call %s: %w", method, r.Err)
	}
	return r.Result, nil
}

// timerPool recycles request-timeout timers. Since Go 1.23 a stopped
// timer's channel holds no stale value, so a recycled timer is clean.
var timerPool sync.Pool

func getTimer(d time.Duration) *time.Timer {
	if t, ok := timerPool.Get().(*time.Timer); ok {
		t.Reset(d)
		return t
	}
	return time.NewTimer(d)
}

func putTimer(t *time.Timer) {
	t.Stop()
	timerPool.Put(t)
}

// readOnly reports whether a call of method is made again on a new
// connection: the dialect names it as reading only, and
// WithReadOnlyRetry did not turn that off.
func (c *Client) readOnly(method string) bool {
	if c.cfg.noCallRetry {
		return false
	}
	return c.classifyMethod(method, nil).ReadOnly
}
