package natsbridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/wsfan/wsfan/pkg/client"
)

// The kinds of failed call a leader replies with, in HeaderError.
const (
	callRPC     = "rpc"     // the upstream answered with an error object (the body)
	callPolicy  = "policy"  // the call policy refused the method
	callLost    = "lost"    // the upstream connection was lost or is not up
	callTimeout = "timeout" // the upstream did not answer in time
	callBusy    = "busy"    // too many calls in flight
	callFailed  = "failed"  // anything else (the body says what)
)

// noLeaderRetry is how often a call waiting for a leader tries again.
const noLeaderRetry = 50 * time.Millisecond

// CallRaw sends an RPC call to the group's leader, which makes it
// upstream, and returns the JSON result. params is JSON, or nil for
// none. An error object from the upstream is a *client.RPCError; a lost
// upstream is client.ErrConnectionLost; no answer within ctx (bounded by
// the request timeout) is client.ErrTimeout. While the group has no
// leader the call waits for one, and fails with ErrNoLeader when ctx
// ends first: a call that no leader received is safe to send again, one
// that a leader received is never sent twice.
func (m *Member) CallRaw(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	ctx, cancel := m.withTimeout(ctx)
	defer cancel()
	req := &nats.Msg{
		Subject: m.subj.rpc,
		Header:  nats.Header{HeaderMethod: []string{method}},
		Data:    params,
	}
	for {
		resp, err := m.nc.RequestMsgWithContext(ctx, req)
		switch {
		case err == nil:
			return decodeReply(method, resp)
		case errors.Is(err, nats.ErrNoResponders):
			if !sleep(ctx, noLeaderRetry) {
				return nil, fmt.Errorf("natsbridge: call %s: %w", method, ErrNoLeader)
			}
		case errors.Is(err, context.DeadlineExceeded):
			return nil, fmt.Errorf("natsbridge: call %s: %w", method, client.ErrTimeout)
		default:
			return nil, fmt.Errorf("natsbridge: call %s: %w", method, err)
		}
	}
}

// decodeReply turns the leader's reply into a result or an error.
func decodeReply(method string, resp *nats.Msg) ([]byte, error) {
	kind := first(resp.Header, HeaderError)
	if kind == "" {
		return resp.Data, nil
	}
	switch kind {
	case callRPC:
		e := new(client.RPCError)
		if err := json.Unmarshal(resp.Data, e); err != nil {
			return nil, fmt.Errorf("natsbridge: call %s: malformed error from the leader: %q", method, resp.Data)
		}
		return nil, e
	case callPolicy:
		return nil, fmt.Errorf("%w: %s: %s", ErrMethodNotAllowed, method, resp.Data)
	case callLost:
		return nil, fmt.Errorf("natsbridge: call %s: %w: %s", method, client.ErrConnectionLost, resp.Data)
	case callTimeout:
		return nil, fmt.Errorf("natsbridge: call %s: %w", method, client.ErrTimeout)
	case callBusy:
		return nil, fmt.Errorf("natsbridge: call %s: %w", method, ErrBusy)
	}
	return nil, fmt.Errorf("natsbridge: call %s failed on the leader: %s", method, resp.Data)
}

// encodeCallError is the leader's reply for a failed call.
func encodeCallError(err error) *nats.Msg {
	kind, body := callFailed, []byte(err.Error())
	var rpcErr *client.RPCError
	var pe policyError
	switch {
	case errors.As(err, &rpcErr):
		kind = callRPC
		body, _ = json.Marshal(rpcErr) // RPCError always encodes
	case errors.As(err, &pe):
		kind = callPolicy
	case errors.Is(err, ErrBusy):
		kind, body = callBusy, nil
	case errors.Is(err, client.ErrTimeout), errors.Is(err, context.DeadlineExceeded):
		kind, body = callTimeout, nil
	case errors.Is(err, client.ErrConnectionLost), errors.Is(err, client.ErrClosed), errors.Is(err, context.Canceled):
		kind = callLost
	}
	return &nats.Msg{Header: nats.Header{HeaderError: []string{kind}}, Data: body}
}

// policyError is the call policy's refusal, on the leader.
type policyError struct{ err error }

func (e policyError) Error() string { return e.err.Error() }
