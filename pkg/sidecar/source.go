package sidecar

import (
	"context"
	"time"

	"github.com/wsfan/wsfan/pkg/client"
)

// source is where the sidecar's topics and forwarded calls come from, a
// client.Holder with what the status reads of it: the upstream connection it holds itself
// (upstream.go), or a NATS group of sidecars whose leader holds the one
// connection (natssource.go). Status, metrics and /readyz read its
// state.
type source interface {
	// run is the source's goroutine: it connects (retrying until it
	// succeeds, so the sidecar may start before what it depends on) and
	// watches the connection until ctx ends.
	run(ctx context.Context)
	// feed is where topics and calls come from, for the hub and the
	// local clients' calls to use directly: the upstream's client, or
	// the group member. It waits within ctx for the first to exist (the
	// first dial attempt, the group joined), and fails with ErrClosed
	// once the source is closed.
	feed(ctx context.Context) (client.Holder, error)
	// state is the connection's state, StateConnecting before the first.
	state() client.State
	// group describes the NATS group, or is nil for an upstream held
	// directly.
	group() *GroupStatus
	// trouble says why the source is not connected, when it is not.
	trouble() *trouble
	// lag is the upstream link's last ping round trip (client.Client.Lag),
	// 0 where unknown.
	lag() time.Duration
	// endpoint is the upstream endpoint in use or being dialled
	// (client.Client.Endpoint), redacted; "" where unknown.
	endpoint() string
	// legs describes a hot standby's connections, or is nil.
	legs() []LegStatus
	// quiet says whether topic was found stale, silent while others
	// flowed, and still is (client.Client.Stale), and whether it is
	// silent beyond its stale limit, others or not (client.Client.Silent).
	quiet(topic string) (stale, silent bool)
	// resync asks for topic's whole state again (a book's snapshot) and
	// reports whether it could.
	resync(topic string) bool
	// close drops the connection; run's ctx is cancelled first.
	close()
}

// GroupStatus describes the NATS group a sidecar belongs to
// (Config.NATS).
type GroupStatus struct {
	Name   string `json:"name"`   // the group's name
	Member string `json:"member"` // this sidecar's member name in the group
	// Leader is true while this sidecar holds the group's upstream;
	// Epoch is the epoch of its current or last term (0 if it never led).
	Leader bool   `json:"leader"`
	Epoch  uint64 `json:"epoch"`
	// LeaderMember is the member name of the sidecar that holds the
	// group's upstream (this one's while Leader), as this sidecar last
	// saw the lease, at most a quarter of -nats-lease-ttl ago; empty
	// while no member holds it (a takeover under way) or NATS cannot
	// be asked.
	LeaderMember string `json:"leader_member,omitempty"`
	// NATS is this sidecar's NATS connection's state (connected,
	// reconnecting, closed).
	NATS string `json:"nats,omitempty"`
	// Upstream is the group's upstream state as the leader last reported
	// it (every eighth of the lease TTL), ReportAgeSeconds how long ago;
	// empty while no report came within the lease TTL. UpstreamStatus's
	// State and LagSeconds are the leader's report when NATS is
	// connected.
	Upstream         string  `json:"upstream,omitempty"`
	ReportAgeSeconds float64 `json:"report_age_seconds,omitempty"`
	// PathDown is true while this sidecar, having given up the lease
	// because its own upstream path was dead, probes that path and does
	// not campaign.
	PathDown bool `json:"path_down,omitempty"`
}
