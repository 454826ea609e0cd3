package sidecar

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"go.uber.org/zap"

	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/natsbridge"
)

// natsSource makes the sidecar a member of a NATS group (Config.NATS):
// its topics and calls come from the group, and whichever member leads
// holds the one upstream connection, dialed with the same options as a
// sidecar's own. Its goroutine connects to NATS and joins the group,
// retrying until it can, so the sidecar may start before NATS.
type natsSource struct {
	// Set by newNATSSource, read only after.
	cfg   *Config
	opts  []nats.Option
	join  []natsbridge.Option
	stats *stats // reconnects, calls, call errors
	log   *zap.Logger

	issues trouble // the NATS connection's last failure
	// onDown tells the hole's start to the hub's topics (hub.holeStarts);
	// set by NewServer before run starts, called by run's goroutine.
	onDown func()

	// mu protects the following.
	mu sync.Mutex
	nc *nats.Conn // nil until run connects
	// unreachable is set while NATS cannot be reached and the failure
	// was logged, so it is logged once an outage.
	unreachable atomic.Bool
	m           *natsbridge.Member // nil until the member joined
	changed     chan struct{}      // closed and replaced when m is set
}

func newNATSSource(cfg *Config, upstream []client.Option, st *stats, log *zap.Logger) *natsSource {
	n := &natsSource{cfg: cfg, stats: st, log: log.With(zap.String("group", cfg.NATSGroup)), changed: make(chan struct{})}
	n.opts = []nats.Option{
		nats.Name("wsfan-sidecar " + cfg.NATSGroup),
		nats.MaxReconnects(-1),
		nats.ReconnectBufSize(-1), // a cut-off leader publishes no backlog when it comes back
		nats.RetryOnFailedConnect(true),
		// A dead or stalled link is noticed within MaxPingsOut+1 pings
		// (4s by default), not nats.go's 2 minutes: a cut-off member
		// reconnects, and its clients are not fed a late burst.
		nats.PingInterval(cfg.NATSPing),
		nats.MaxPingsOutstanding(cfg.NATSMaxPingsOut),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			st.reconnects.Add(1)
			n.log.Warn("NATS disconnected", zap.Error(err))
			n.issues.failed(err, 0, time.Time{})
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) {
			n.log.Info("NATS reconnected", zap.String("server", nc.ConnectedUrlRedacted()))
			n.unreachable.Store(false)
		}),
		// Why NATS cannot be reached (connection refused, a TLS or
		// credentials refusal), from the first attempt on: without it the
		// only error seen is a publish's "outbound buffer limit exceeded".
		nats.ReconnectErrHandler(func(_ *nats.Conn, err error) {
			n.issues.failed(fmt.Errorf("NATS unreachable: %w", err), 0, time.Time{})
			if !n.unreachable.Swap(true) {
				n.log.Warn("NATS unreachable; retrying (logged once until it is reached)", zap.Error(err))
			}
		}),
	}
	if cfg.NATSCreds != "" {
		n.opts = append(n.opts, nats.UserCredentials(cfg.NATSCreds))
	}
	if cfg.NATSTLSCA != "" {
		n.opts = append(n.opts, nats.RootCAs(cfg.NATSTLSCA))
	}
	if cfg.NATSTLSCert != "" {
		n.opts = append(n.opts, nats.ClientCert(cfg.NATSTLSCert, cfg.NATSTLSKey))
	}
	// The leader's upstream: one connection, or with Config.HotStandby
	// its legs, as a sidecar of its own holds it.
	dial := natsbridge.DialClient(cfg.Upstream, upstream...)
	if cfg.HotStandby > 0 {
		dial = natsbridge.DialStandby(cfg.Upstream, cfg.HotStandby, upstream...)
	}
	n.join = []natsbridge.Option{
		natsbridge.WithUpstream(dial),
		natsbridge.WithLeaseTTL(cfg.NATSLeaseTTL),
		natsbridge.WithGrace(cfg.Grace),
		natsbridge.WithRequestTimeout(cfg.RequestTimeout),
		natsbridge.WithDelivery(client.Buffer(8192)),
		natsbridge.WithLogger(log),
		// The leader refuses what its own configuration blocks, whatever
		// the member that forwarded the call allows.
		natsbridge.WithCallPolicy(func(method string) error {
			if slices.Contains(cfg.BlockedMethods, method) {
				return fmt.Errorf("%s is not forwarded: the group's upstream connection is shared", method)
			}
			return nil
		}),
	}
	// The leader parses the group's topics with its upstream's dialect,
	// as the upstream's options set it (options refused there fail the
	// leader's Join as they would its dial).
	if set, err := client.Resolve(upstream...); err == nil {
		n.join = append(n.join, natsbridge.WithProtocol(set.Protocol()))
	}
	n.join = append(n.join, cfg.NATSOptions...)
	return n
}

// run is the source's goroutine: it connects to NATS and joins the group,
// each retried until it succeeds or ctx ends, then waits for ctx.
func (n *natsSource) run(ctx context.Context) {
	nc, err := nats.Connect(n.cfg.NATS, n.opts...)
	if err != nil { // with RetryOnFailedConnect, only unusable settings
		n.log.Error("cannot use the NATS settings", zap.Error(err))
		return
	}
	n.mu.Lock()
	if ctx.Err() != nil { // close ran before nc was stored: it is ours to close
		n.mu.Unlock()
		nc.Close()
		return
	}
	n.nc = nc
	n.mu.Unlock()
	if !nc.IsConnected() {
		n.log.Warn("NATS not reachable yet; retrying", zap.String("nats", n.cfg.NATS))
	}
	m, err := natsbridge.Join(ctx, nc, n.cfg.NATSGroup, n.join...)
	if err != nil {
		if ctx.Err() == nil {
			n.log.Error("cannot join the group", zap.Error(err))
		}
		return
	}
	n.mu.Lock()
	if ctx.Err() != nil { // close ran before m was stored: it is ours to close
		n.mu.Unlock()
		_ = m.Close()
		return
	}
	n.m = m
	close(n.changed)
	n.changed = make(chan struct{})
	n.mu.Unlock()
	n.log.Info("joined the group", zap.String("member", m.Status().MemberID))
	n.watch(ctx)
}

// holeWatchEvery is how often watch reads the source's state.
const holeWatchEvery = 100 * time.Millisecond

// watch is run's goroutine once the group is joined, until ctx ends:
// every holeWatchEvery it reads the source's state, and when that leaves
// connected (this member's NATS link lost, or the leader's report of the
// group's upstream down or unheard for the lease TTL) it tells the
// hole's start (onDown), once a hole: programs learn of it then, not
// only with the next message.
func (n *natsSource) watch(ctx context.Context) {
	tick := time.NewTicker(holeWatchEvery)
	defer tick.Stop()
	up := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		switch st := n.state(); {
		case st == client.StateConnected:
			up = true
		case up:
			up = false
			n.log.Info("the group's feed stopped; telling programs", zap.Stringer("state", st))
			if n.onDown != nil {
				n.onDown()
			}
		}
	}
}

// feed returns the group member, waiting within ctx until the group is
// joined. Its subscribes ask the leader for each topic, one by one; its
// unsubscribes leave the group subscriptions on NATS, and the leader
// unsubscribes upstream what no member wants any more.
func (n *natsSource) feed(ctx context.Context) (client.Holder, error) {
	for {
		n.mu.Lock()
		m, changed := n.m, n.changed
		n.mu.Unlock()
		if m != nil {
			return m, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, fmt.Errorf("group %s not joined (%s): %w", n.cfg.NATSGroup, n.issues.describe(), ctx.Err())
		}
	}
}

// state is connecting until the group is joined, then the member's
// (natsbridge.Member.State: its NATS connection's while that is not
// connected, else the group's upstream state as the leader reports it).
func (n *natsSource) state() client.State {
	n.mu.Lock()
	nc, m := n.nc, n.m
	n.mu.Unlock()
	if nc == nil || m == nil {
		return client.StateConnecting
	}
	return m.State()
}

// resync cannot ask the group's leader for a fresh snapshot; a sidecar
// in a group keeps no books (topicConfig.noBooks), so nothing asks.
func (n *natsSource) resync(string) bool { return false }

// member is the group member, nil until joined.
func (n *natsSource) member() *natsbridge.Member {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.m
}

// lag is the leader's upstream round trip, as it reports it.
func (n *natsSource) lag() time.Duration {
	if m := n.member(); m != nil {
		return m.Status().UpstreamLag
	}
	return 0
}

// endpoint is unknown to a member: the leader holds the upstream.
func (n *natsSource) endpoint() string { return "" }

// legs is nil: a member holds no upstream connection.
func (n *natsSource) legs() []LegStatus { return nil }

// quiet says whether topic has had no message from the group beyond its
// limit (natsbridge.Member.Silent: 10 times its usual interval and at
// least 5s by default), whichever link failed: the leader's upstream,
// the leader, or this member's NATS link. A member does not resubscribe
// a topic, so none is ever stale.
func (n *natsSource) quiet(topic string) (stale, silent bool) {
	if m := n.member(); m != nil {
		return false, m.Silent(topic)
	}
	return false, false
}

// trouble is the NATS connection's last failure.
func (n *natsSource) trouble() *trouble { return &n.issues }

func (n *natsSource) group() *GroupStatus {
	n.mu.Lock()
	m := n.m
	n.mu.Unlock()
	g := &GroupStatus{Name: n.cfg.NATSGroup}
	if nc := n.conn(); nc != nil {
		g.NATS = natsState(nc).String()
	}
	if m != nil {
		st := m.Status()
		g.Member, g.Leader, g.Epoch, g.LeaderMember = st.MemberID, st.Leader, st.Epoch, st.LeaderID
		g.PathDown, g.Upstream = st.PathDown, st.Upstream
		if st.ReportAge > 0 {
			g.ReportAgeSeconds = st.ReportAge.Seconds()
		}
	}
	return g
}

// conn is the NATS connection, nil until run made it.
func (n *natsSource) conn() *nats.Conn {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.nc
}

// natsState is the NATS connection's own state.
func natsState(nc *nats.Conn) client.State {
	switch {
	case nc.IsClosed():
		return client.StateClosed
	case nc.IsConnected():
		return client.StateConnected
	default:
		return client.StateReconnecting
	}
}

// close leaves the group (a leader steps down and drops the upstream at
// once) and closes the NATS connection.
func (n *natsSource) close() {
	n.mu.Lock()
	nc, m := n.nc, n.m
	n.mu.Unlock()
	if m != nil {
		if err := m.Close(); err != nil {
			n.log.Warn("leaving the group", zap.Error(err))
		}
	}
	if nc != nil {
		nc.Close()
	}
}
