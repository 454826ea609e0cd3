package natsbridge

import (
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/wsfan/wsfan/pkg/client"
)

// lagger is an upstream that knows its link's round trip.
type lagger interface{ Lag() time.Duration }

// upstreamState is the term's upstream as the group sees it, and whether
// it is down: connecting until a dial succeeded (reconnecting, and down,
// once one failed), then the upstream's own state, down unless
// connected (a reconnect's dial in progress included). The term's first
// dial is not down while it runs: a slow handshake is not a dead path.
func (l *leader) upstreamState() (state client.State, lag time.Duration, down bool) {
	l.mu.Lock()
	up := l.up
	l.mu.Unlock()
	switch {
	case up == nil && l.dialFailed.Load():
		return client.StateReconnecting, 0, true
	case up == nil:
		return client.StateConnecting, 0, false
	}
	if lg, ok := up.(lagger); ok {
		lag = lg.Lag()
	}
	state = up.State()
	return state, lag, state != client.StateConnected
}

// watchUpstream is the term's watcher goroutine. Every TTL/8 it reports the
// upstream's state to the group (report), and it ends the term
// (errUpstreamDown) once the upstream has been down, a dial failed or a
// connection lost and not yet back, for the yield limit: a member whose
// path works then takes over, and this one probes its own path before
// it campaigns again (probePath).
func (l *leader) watchUpstream() {
	tick := time.NewTicker(max(l.env.leaseTTL/8, 10*time.Millisecond))
	defer tick.Stop()
	var downSince time.Time
	for {
		select {
		case <-l.ctx.Done():
			return
		case <-tick.C:
		}
		state, lag, down := l.upstreamState()
		l.report(state, lag)
		now := time.Now()
		switch {
		case !down:
			downSince = time.Time{}
		case downSince.IsZero():
			downSince = now
		case l.env.yieldAfter > 0 && now.Sub(downSince) >= l.env.yieldAfter:
			l.yield(fmt.Errorf("%w for %v", errUpstreamDown, now.Sub(downSince).Round(time.Millisecond)))
			return
		}
	}
}

// Headers of the leader's reports on wsfan.<group>.leader.
const (
	// HeaderMember is the reporting leader's member id.
	HeaderMember = "Wsfan-Member"
	// HeaderUpstream is the leader's upstream state (client.State's
	// string: connected, reconnecting, ...).
	HeaderUpstream = "Wsfan-Upstream"
	// HeaderLag is the leader's upstream round trip, in nanoseconds.
	HeaderLag = "Wsfan-Lag"
)

// report publishes the upstream's state on the group's report subject,
// where every member reads it (onReport). A report that cannot be sent
// is not retried: the next comes a tick later.
func (l *leader) report(state client.State, lag time.Duration) {
	h := nats.Header{
		HeaderEpoch:    []string{l.epoch},
		HeaderMember:   []string{l.env.memberID},
		HeaderUpstream: []string{state.String()},
		HeaderLag:      []string{strconv.FormatInt(int64(lag), 10)},
	}
	_ = l.env.nc.PublishMsg(&nats.Msg{Subject: l.env.subj.leader, Header: h})
}

// groupReport is the last leader report a member read.
type groupReport struct {
	epoch  uint64
	member string
	state  string
	lag    time.Duration
	at     time.Time // when it arrived
}

// onReport is the NATS handler of the report subject: it keeps the
// report of the highest epoch (a deposed leader's late report does not
// replace its successor's).
func (m *Member) onReport(msg *nats.Msg) {
	epoch, err := strconv.ParseUint(first(msg.Header, HeaderEpoch), 10, 64)
	if err != nil || epoch == 0 {
		return
	}
	lag, _ := strconv.ParseInt(first(msg.Header, HeaderLag), 10, 64)
	r := &groupReport{epoch: epoch, member: first(msg.Header, HeaderMember),
		state: first(msg.Header, HeaderUpstream), lag: time.Duration(lag), at: time.Now()}
	for {
		old := m.report.Load()
		if old != nil && old.epoch > epoch && time.Since(old.at) < m.res.leaseTTL {
			return
		}
		if m.report.CompareAndSwap(old, r) {
			return
		}
	}
}
