package natsbridge

import (
	"context"

	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/standby"
)

// Upstream is the connection to the exchange that the leader holds: a
// client.Feed it can close. A member that is given a Dialer
// (WithUpstream) is a candidate: when it wins the lease it dials, and
// when it loses the lease it closes the Upstream before the lease could
// have expired. A *client.Client is one, and so is a *standby.Standby.
type Upstream interface {
	client.Feed
	// State says whether the connection is up: a leader whose upstream
	// is not client.StateConnected for WithYieldAfter gives the lease
	// up, and the group's members read it in Status.Upstream.
	State() client.State
	// Close drops the connection and ends every stream; the connection
	// is gone when it returns.
	Close() error
}

var (
	_ Upstream = (*client.Client)(nil)
	_ Upstream = (*standby.Standby)(nil)
)

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
		return c, nil
	}
}

// DialStandby returns a Dialer that dials url with a hot standby
// (standby.Dial, spares more connections, opts as DialClient's):
// the leader's upstream then loses nothing when one of its connections
// dies.
func DialStandby(url string, spares int, opts ...client.Option) Dialer {
	opts = append([]client.Option(nil), opts...)
	return func(ctx context.Context) (Upstream, error) {
		sb, err := standby.Dial(ctx, url, spares, opts...)
		if err != nil {
			return nil, err
		}
		return sb, nil
	}
}

// subscribeOne subscribes one topic through f.
func subscribeOne(ctx context.Context, f client.Feed, topic string) (client.Stream, error) {
	streams, errs, err := f.SubscribeStreams(ctx, []string{topic})
	switch {
	case err != nil:
		return nil, err
	case errs[0] != nil:
		return nil, errs[0]
	}
	return streams[0], nil
}
