package natsbridge

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"

	"github.com/wsfan/wsfan/pkg/client"
)

// Member is one process in a group: it consumes the group's topics from
// NATS (Subscribe, CallRaw) and, when it is a candidate (WithUpstream),
// takes its turn holding the upstream connection. It is safe for
// concurrent use.
type Member struct {
	nc *nats.Conn // owned by the caller: Close does not close it
	js jetstream.JetStream
	// lvcJS publishes last values asynchronously for every term. It is
	// never cleaned up (nats.go's CleanupPublisher can strand the
	// goroutine that watches reconnects); that goroutine ends with nc.
	lvcJS jetstream.JetStream
	cfg   config
	subj  subjects
	res   resources
	log   *zap.Logger

	wants *wantSet
	stats stats

	// Written by the candidate goroutine, read by Status.
	leading atomic.Bool
	epoch   atomic.Uint64
	// holder is the lease holder's member id as the candidate last saw
	// it: this member's while it leads, another's read from the lease
	// when a campaign found it held, nil when no member held it or NATS
	// could not be asked.
	holder atomic.Pointer[string]
	// pathDown is set by the candidate goroutine while it probes its own
	// path after yielding the lease (probePath).
	pathDown atomic.Bool
	// report is the leader's last report of its upstream (onReport),
	// nil before the first.
	report  atomic.Pointer[groupReport]
	reports *nats.Subscription // the report subject's; unsubscribed by Close

	// events is Events' channel: nothing is sent on it (the group's
	// upstream state is State); Close closes it.
	events chan client.Event

	// mu protects the following.
	mu     sync.Mutex
	subs   map[*Subscription]struct{}
	closed bool

	ctx       context.Context // cancelled by Close
	cancel    context.CancelFunc
	wg        sync.WaitGroup // the announcer, the candidate and leader hooks
	closeOnce sync.Once
}

// Join makes this process a member of group on nc and returns once the
// group's JetStream state (lease, wants, last values) is bound; a
// candidate creates it when missing. While NATS is unreachable it
// retries with backoff, logging each failure, until ctx ends. A member
// that is not a candidate fails at once with ErrUnknownGroup when no
// candidate ever created the group.
//
// nc stays the caller's: give it unlimited reconnects
// (nats.MaxReconnects(-1)), and preferably nats.ReconnectBufSize(-1), so
// a leader cut off from NATS does not publish a backlog when it comes
// back (consumers would drop it as stale anyway).
func Join(ctx context.Context, nc *nats.Conn, group string, opts ...Option) (*Member, error) {
	cfg := defaultConfig()
	for _, o := range opts {
		o(&cfg)
	}
	if err := cfg.validate(group); err != nil {
		return nil, err
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("natsbridge: %w", err)
	}
	lvcJS, err := jetstream.New(nc, jetstream.WithPublishAsyncTimeout(lvcAckWait))
	if err != nil {
		return nil, fmt.Errorf("natsbridge: %w", err)
	}
	m := &Member{
		nc:    nc,
		js:    js,
		lvcJS: lvcJS,
		cfg:   cfg,
		subj:  newSubjects(group),
		log:   cfg.logger.With(zap.String("group", group), zap.String("member", cfg.id)),
		wants: newWantSet(),
		subs:  make(map[*Subscription]struct{}),
	}
	m.events = make(chan client.Event)
	if m.res, err = m.bindRetry(ctx, group); err != nil {
		return nil, err
	}
	if m.res.leaseTTL != cfg.leaseTTL && cfg.dial != nil {
		m.log.Warn("natsbridge: the group's lease bucket has another TTL; using it",
			zap.Duration("ttl", m.res.leaseTTL), zap.Duration("configured", cfg.leaseTTL))
	}
	if m.reports, err = nc.Subscribe(m.subj.leader, m.onReport); err != nil {
		return nil, fmt.Errorf("natsbridge: %w", err)
	}
	m.ctx, m.cancel = context.WithCancel(context.Background())
	m.wg.Add(1)
	go m.announce(m.ctx)
	if cfg.dial != nil {
		m.wg.Add(1)
		go m.campaign(m.ctx)
	}
	m.log.Info("natsbridge: joined", zap.Bool("candidate", cfg.dial != nil), zap.Duration("lease_ttl", m.res.leaseTTL))
	return m, nil
}

// bindRetry binds the group's state, retrying while NATS cannot answer.
func (m *Member) bindRetry(ctx context.Context, group string) (resources, error) {
	bo := m.newBackoff()
	for attempt := 1; ; attempt++ {
		actx, cancel := context.WithTimeout(ctx, 5*time.Second)
		r, err := bind(actx, m.js, group, &m.cfg)
		cancel()
		switch {
		case err == nil:
			return r, nil
		case errors.Is(err, ErrUnknownGroup), errors.Is(err, nats.ErrConnectionClosed):
			return r, err
		case ctx.Err() != nil:
			return r, fmt.Errorf("natsbridge: failed to join group %s: %w (last error: %w)", group, ctx.Err(), err)
		}
		wait := bo.NextBackOff()
		m.log.Warn("natsbridge: NATS not ready; retrying", zap.Int("attempt", attempt),
			zap.String("nats", m.nc.Status().String()), zap.Error(err), zap.Duration("in", wait))
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return r, fmt.Errorf("natsbridge: failed to join group %s: %w (last error: %w)", group, ctx.Err(), err)
		}
	}
}

// Close leaves the group: a leader steps down at once (closing its
// upstream and releasing the lease, so another member takes over without
// waiting for the TTL), every subscription ends (its channels closed,
// no error), the member's wanted topics are withdrawn, and every
// goroutine the member started has ended when it returns. The NATS
// connection is left open. It is safe to call more than once.
func (m *Member) Close() error {
	m.closeOnce.Do(func() {
		m.mu.Lock()
		m.closed = true
		subs := make([]*Subscription, 0, len(m.subs))
		for s := range m.subs {
			subs = append(subs, s)
		}
		m.mu.Unlock()
		for _, s := range subs {
			s.finish(nil)
		}
		m.cancel()
		m.wg.Wait()
		_ = m.reports.Unsubscribe()
		close(m.events)
	})
	return nil
}

// Status says whether this member leads the group.
type Status struct {
	// Leader is true while this member holds the lease and the upstream.
	Leader bool
	// Epoch is the epoch of this member's current or last term, 0 if it
	// never led.
	Epoch uint64
	// MemberID is this member's id.
	MemberID string
	// LeaseTTL is the group's lease TTL.
	LeaseTTL time.Duration
	// LeaderID is the member id of the group's leader, as this member
	// last saw the lease (at most a quarter of the lease TTL ago): its own
	// while it leads. It is empty while no member holds the lease, while
	// NATS cannot be asked, and on a member that is not a candidate
	// (without WithUpstream), which never looks.
	LeaderID string
	// PathDown is true while this member does not campaign because its
	// own path to the upstream failed when it last led and no probe has
	// connected since (WithYieldAfter).
	PathDown bool
	// Upstream is the group's upstream state as the leader last reported
	// it (client.State's string: "connected", "reconnecting", ...; the
	// leader reports every TTL/8), UpstreamLag its last round trip, and
	// ReportAge how long ago the report arrived. Upstream is empty while
	// no report arrived within the lease TTL: no member leads, or this
	// member cannot hear the leader.
	Upstream    string
	UpstreamLag time.Duration
	ReportAge   time.Duration
}

// Status returns the member's leadership state and the group's upstream
// state as the leader reports it.
func (m *Member) Status() Status {
	st := Status{Leader: m.leading.Load(), Epoch: m.epoch.Load(), MemberID: m.cfg.id, LeaseTTL: m.res.leaseTTL,
		PathDown: m.pathDown.Load()}
	if id := m.holder.Load(); id != nil {
		st.LeaderID = *id
	}
	if r := m.report.Load(); r != nil {
		st.ReportAge = time.Since(r.at)
		if st.ReportAge < m.res.leaseTTL {
			st.Upstream, st.UpstreamLag = r.state, r.lag
			if st.LeaderID == "" && m.cfg.dial == nil {
				st.LeaderID = r.member // a member that is not a candidate reads no lease
			}
		}
	}
	return st
}

// Stats returns the member's counters.
func (m *Member) Stats() Stats { return m.stats.snapshot() }

// register adds a subscription that Subscribe finished setting up, so
// Close ends it; one that already ended (a topic refused meanwhile) is
// not added.
func (m *Member) register(s *Subscription) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return ErrClosed
	}
	// A finish after this check forgets s under m.mu, so after the insert.
	if !s.in.Ended() {
		m.subs[s] = struct{}{}
	}
	return nil
}

func (m *Member) isClosed() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.closed
}

// forget removes an ended subscription.
func (m *Member) forget(s *Subscription) {
	m.mu.Lock()
	delete(m.subs, s)
	m.mu.Unlock()
}

// withTimeout bounds ctx by the request timeout unless it ends earlier.
func (m *Member) withTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	if d, ok := ctx.Deadline(); ok && time.Until(d) <= m.cfg.reqTimeout {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, m.cfg.reqTimeout)
}

// newBackoff returns the backoff of every retry loop: from 100ms doubling
// to 5s, ±50% jitter, forever.
func (m *Member) newBackoff() *backoff.ExponentialBackOff {
	b := backoff.NewExponentialBackOff()
	b.InitialInterval = m.cfg.backoffBase
	b.RandomizationFactor = 0.5
	b.Multiplier = 2
	b.MaxInterval = m.cfg.backoffMax
	b.MaxElapsedTime = 0
	b.Reset()
	return b
}

// sleep waits d or until ctx ends, and reports whether ctx is still live.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
