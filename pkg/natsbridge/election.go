package natsbridge

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"
)

// leaseKey is the lease's key in the group's lease bucket; its value is
// the leader's member id and the bucket's TTL expires it.
const leaseKey = "leader"

// errClosing ends a term because the member is closing.
var errClosing = errors.New("member closing")

// errUpstreamDown ends a term because the leader's upstream stayed down
// for the yield limit (WithYieldAfter).
var errUpstreamDown = errors.New("upstream down")

// campaign is the candidate goroutine. Every quarter of the lease TTL it
// tries to create the lease key; the create that wins makes this member
// the leader, with the key's revision as its epoch (revisions only grow,
// so a later leader always has a higher epoch). It then holds the lease
// until it steps down, and tries again. A create that finds the key
// taken reads who holds it, for Status.
func (m *Member) campaign(ctx context.Context) {
	defer m.wg.Done()
	poll := m.res.leaseTTL / 4
	for {
		sent := time.Now()
		cctx, cancel := context.WithTimeout(ctx, poll)
		rev, err := m.res.lease.Create(cctx, leaseKey, []byte(m.cfg.id))
		cancel()
		switch {
		case err == nil:
			m.holder.Store(&m.cfg.id)
			reason := m.lead(ctx, rev, sent)
			m.holder.Store(nil) // the next round reads the new holder
			if errors.Is(reason, errUpstreamDown) && !m.probePath(ctx) {
				return
			}
		case ctx.Err() != nil:
		case errors.Is(err, jetstream.ErrKeyExists):
			m.readHolder(ctx, poll)
		default:
			m.holder.Store(nil)
			m.log.Debug("natsbridge: lease create failed", zap.Error(err))
		}
		if !sleep(ctx, poll) {
			return
		}
	}
}

// readHolder stores the lease holder's member id, read within timeout,
// in m.holder (nil when the key is gone or the read failed).
func (m *Member) readHolder(ctx context.Context, timeout time.Duration) {
	gctx, cancel := context.WithTimeout(ctx, timeout)
	e, err := m.res.lease.Get(gctx, leaseKey)
	cancel()
	if err != nil {
		m.holder.Store(nil)
		return
	}
	id := string(e.Value())
	m.holder.Store(&id)
}

// lead is one term: it starts the leader, holds the lease, and when the
// lease cannot be held, the upstream stays down (WithYieldAfter) or the
// member closes, stops the leader, which drops the upstream, before
// returning why. won is when the winning create was sent: the lease
// expires no earlier than won + TTL. A term that ends for a dead upstream
// or a close releases the lease, so another member takes over at once.
func (m *Member) lead(ctx context.Context, epoch uint64, won time.Time) error {
	ttl := m.res.leaseTTL
	m.stats.terms.Add(1)
	m.epoch.Store(epoch)
	m.leading.Store(true)
	log := m.log.With(zap.Uint64("epoch", epoch))
	log.Info("natsbridge: leading the group")

	lctx, cancel := context.WithCancelCause(ctx)
	f := newFence(won, ttl)
	l := newLeader(lctx, m.leaderEnv(), epoch, f, cancel)
	go l.run()
	if m.cfg.onLeader != nil {
		m.wg.Add(1)
		go func() {
			defer m.wg.Done()
			m.cfg.onLeader(lctx, epoch)
		}()
	}

	rev := epoch
	reason := m.holdLease(lctx, &rev, f)
	cancel(reason)
	<-l.dropped
	m.leading.Store(false)
	held := time.Since(f.deadline()) + ttl/2 // since the last successful renewal was sent
	<-l.done                                 // nothing of the term runs any more
	switch {
	case errors.Is(reason, errClosing), errors.Is(reason, errUpstreamDown):
		dctx, dcancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		if err := m.release(dctx, rev); err != nil {
			log.Debug("natsbridge: failed to release the lease", zap.Error(err))
		}
		dcancel()
		if errors.Is(reason, errClosing) {
			log.Info("natsbridge: stepped down: closing")
		} else {
			log.Warn("natsbridge: stepped down: the upstream is down; another member may reach it",
				zap.NamedError("reason", reason))
		}
	case held >= ttl:
		log.Error("natsbridge: stepped down after the lease could have expired",
			zap.NamedError("reason", reason), zap.Duration("since_renewal", held), zap.Duration("ttl", ttl))
	default:
		log.Warn("natsbridge: stepped down", zap.NamedError("reason", reason),
			zap.Duration("since_renewal", held), zap.Duration("ttl", ttl))
	}
	return reason
}

// holdLease renews the lease every TTL/4 with a compare-and-swap on its
// revision, retrying a failed renewal every TTL/16, and moves f after
// each success. It returns why the term ends: the term's ctx ended (its
// cause: the member is closing, or the leader yielded its dead
// upstream), another member holds the key, or no renewal succeeded for
// TTL/2, when f stops proving the lease (the leader then has at least
// TTL/2 to drop its upstream before the lease could expire). rev is the
// lease's last revision.
func (m *Member) holdLease(ctx context.Context, rev *uint64, f *fence) error {
	ttl := m.res.leaseTTL
	kv, id := m.res.lease, m.cfg.id
	retrying := false
	ended := func() error {
		if cause := context.Cause(ctx); !errors.Is(cause, context.Canceled) {
			return cause
		}
		return errClosing
	}
	for {
		deadline := f.deadline()
		next := deadline.Add(-ttl / 4) // a quarter TTL after the last renewal
		if retrying {
			next = time.Now().Add(ttl / 16)
		}
		if next.After(deadline) {
			next = deadline
		}
		if !sleep(ctx, time.Until(next)) {
			return ended()
		}
		if !f.valid() {
			return fmt.Errorf("lease not renewed for %v", ttl/2)
		}
		rctx, cancel := context.WithDeadline(ctx, deadline)
		sent := time.Now()
		newRev, err := kv.Update(rctx, leaseKey, []byte(id), *rev)
		if err == nil {
			cancel()
			*rev, retrying = newRev, false
			f.renewed(sent)
			continue
		}
		if ctx.Err() != nil {
			cancel()
			return ended()
		}
		if errors.Is(err, jetstream.ErrKeyExists) {
			// The revision moved: either a renewal whose answer was lost
			// landed (the key is still ours), or the lease was lost.
			e, gerr := kv.Get(rctx, leaseKey)
			cancel()
			if gerr != nil || string(e.Value()) != id {
				return fmt.Errorf("lease taken by another member: %w", err)
			}
			*rev = e.Revision()
			retrying = true
			continue
		}
		cancel()
		m.log.Debug("natsbridge: lease renewal failed", zap.Error(err))
		retrying = true
	}
}

// release deletes the lease key if it is still this member's, so another
// member takes over without waiting for the TTL. rev is the last revision
// this member knows; a renewal cut short by Close may have moved it.
func (m *Member) release(ctx context.Context, rev uint64) error {
	err := m.res.lease.Delete(ctx, leaseKey, jetstream.LastRevision(rev))
	if !errors.Is(err, jetstream.ErrKeyExists) {
		return err
	}
	e, gerr := m.res.lease.Get(ctx, leaseKey)
	if gerr != nil || string(e.Value()) != m.cfg.id {
		return err // another member's already
	}
	return m.res.lease.Delete(ctx, leaseKey, jetstream.LastRevision(e.Revision()))
}
