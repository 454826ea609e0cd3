package natsbridge

import (
	"context"

	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/standby"
)

// Upstream was the connection to the exchange that the leader holds.
//
// Deprecated: use client.Holder, which it now names.
type Upstream = client.Holder

// Dialer connects to the upstream: the client.Holder the leader holds
// (a *client.Client, a *standby.Standby). A member that is given a Dialer
// (WithUpstream) is a candidate: when it wins the lease it dials, and
// when it loses the lease it closes the Holder before the lease could
// have expired; while the Holder's State is not client.StateConnected
// for WithYieldAfter, the leader gives the lease up, and the group's
// members read its state in Status.Upstream. It is called by the leader,
// again after a failure (with backoff) for as long as it leads.
type Dialer func(ctx context.Context) (client.Holder, error)

// DialClient returns a Dialer that dials url with pkg/client and opts (the
// same options the sidecar gives its upstream: protocol, login hook,
// metrics...). The client reconnects and resubscribes by itself while
// the member leads.
func DialClient(url string, opts ...client.Option) Dialer {
	opts = append([]client.Option(nil), opts...)
	return func(ctx context.Context) (client.Holder, error) {
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
	return func(ctx context.Context) (client.Holder, error) {
		sb, err := standby.Dial(ctx, url, spares, opts...)
		if err != nil {
			return nil, err
		}
		return sb, nil
	}
}

// subscribeOne subscribes one parsed topic through f.
func subscribeOne(ctx context.Context, f client.Holder, topic *protocol.Topic) (client.Stream, error) {
	streams, errs, err := f.SubscribeTopics(ctx, []*protocol.Topic{topic})
	switch {
	case err != nil:
		return nil, err
	case errs[0] != nil:
		return nil, errs[0]
	}
	return streams[0], nil
}
