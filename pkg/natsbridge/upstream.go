package natsbridge

import (
	"context"
	"errors"

	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// Upstream is the connection to the exchange that the leader holds. A
// member that is given a Dialer (WithUpstream) is a candidate: when it
// wins the lease it dials, and when it loses the lease it closes the
// Upstream before the lease could have expired.
type Upstream interface {
	// Subscribe subscribes to one topic upstream and returns once the
	// server acknowledged it. A refused topic is an error for which
	// errors.Is(err, client.ErrRefused) holds.
	Subscribe(ctx context.Context, topic string) (client.Stream, error)
	// CallRaw makes an RPC call upstream: params is JSON (or nil) and the
	// result is the JSON result; a server error is a *client.RPCError.
	CallRaw(ctx context.Context, method string, params []byte) ([]byte, error)
	// Close drops the connection and ends every Feed; the connection is
	// gone when it returns.
	Close() error
}

// Dialer connects to the upstream. It is called by the leader, again
// after a failure (with backoff) for as long as it leads.
type Dialer func(ctx context.Context) (Upstream, error)

// DialClient returns a Dialer that dials url with pkg/client and opts (the
// same options the sidecar gives its upstream: protocol, login hook,
// metrics...). The client reconnects and resubscribes by itself while
// the member leads.
func DialClient(url string, opts ...client.Option) Dialer {
	opts = append([]client.Option(nil), opts...)
	return func(ctx context.Context) (Upstream, error) {
		c, err := client.Dial(ctx, url, opts...)
		if err != nil {
			return nil, err
		}
		return clientUpstream{c}, nil
	}
}

// clientUpstream adapts *client.Client to Upstream.
type clientUpstream struct{ c *client.Client }

// Subscribe reports a topic the dialect cannot express as refused: no
// retry can make it valid.
func (u clientUpstream) Subscribe(ctx context.Context, topic string) (client.Stream, error) {
	s, err := u.c.Subscribe(ctx, []string{topic})
	switch {
	case errors.Is(err, protocol.ErrInvalidTopic):
		return nil, &client.RefusedError{Topics: []string{topic}, Cause: err}
	case err != nil:
		return nil, err
	}
	return s, nil
}

func (u clientUpstream) CallRaw(ctx context.Context, method string, params []byte) ([]byte, error) {
	return u.c.CallRaw(ctx, method, params)
}

func (u clientUpstream) Close() error { return u.c.Close() }
