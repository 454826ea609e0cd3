package natsbridge

import (
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"
)

// union is the leader's view of what the group wants: each member's
// announced topics, and how many members want each topic. A topic enters
// the union with its first member and leaves it a grace period after its
// last one; a member that stops announcing leaves after the wants TTL.
// Owned by the leader's run goroutine.
type union struct {
	grace, ttl time.Duration
	set        func(topic string, on bool) // follow a topic upstream, or stop

	members map[string]memberWants
	count   map[string]int       // members wanting each topic
	idle    map[string]time.Time // topics in the union no member wants, since when
}

type memberWants struct {
	topics map[string]struct{}
	seen   time.Time
}

func newUnion(grace, ttl time.Duration, set func(topic string, on bool)) *union {
	return &union{
		grace:   grace,
		ttl:     ttl,
		set:     set,
		members: make(map[string]memberWants),
		count:   make(map[string]int),
		idle:    make(map[string]time.Time),
	}
}

// update replaces member's topics.
func (u *union) update(member string, topics []string, now time.Time) {
	next := make(map[string]struct{}, len(topics))
	for _, t := range topics {
		if t != "" {
			next[t] = struct{}{}
		}
	}
	prev := u.members[member].topics
	for t := range next {
		if _, ok := prev[t]; !ok {
			u.inc(t)
		}
	}
	for t := range prev {
		if _, ok := next[t]; !ok {
			u.dec(t, now)
		}
	}
	u.members[member] = memberWants{topics: next, seen: now}
}

// remove drops a member that left.
func (u *union) remove(member string, now time.Time) {
	for t := range u.members[member].topics {
		u.dec(t, now)
	}
	delete(u.members, member)
}

func (u *union) inc(topic string) {
	u.count[topic]++
	if u.count[topic] > 1 {
		return
	}
	if _, ok := u.idle[topic]; ok { // still followed, in its grace period
		delete(u.idle, topic)
		return
	}
	u.set(topic, true)
}

func (u *union) dec(topic string, now time.Time) {
	if u.count[topic]--; u.count[topic] > 0 {
		return
	}
	delete(u.count, topic)
	u.idle[topic] = now
}

// sweep drops members silent for the wants TTL and stops following
// topics idle for the grace period.
func (u *union) sweep(now time.Time) {
	for id, mw := range u.members {
		if now.Sub(mw.seen) >= u.ttl {
			u.remove(id, now)
		}
	}
	for t, since := range u.idle {
		if now.Sub(since) >= u.grace {
			delete(u.idle, t)
			u.set(t, false)
		}
	}
}

// followWants keeps the leader's topics equal to the union of the wants
// bucket, until the term ends. Called by the run goroutine.
func (l *leader) followWants() {
	u := newUnion(l.env.grace, l.env.wantTTL, l.setWanted)
	tick := max(min(l.env.grace, l.env.wantTTL)/4, 10*time.Millisecond)
	sweep := time.NewTicker(tick)
	defer sweep.Stop()
	bo := l.env.newBackoff()
	for l.ctx.Err() == nil {
		w, err := l.env.wants.WatchAll(l.ctx)
		if err != nil {
			if l.ctx.Err() != nil {
				return
			}
			wait := bo.NextBackOff()
			l.env.log.Warn("natsbridge: cannot watch wanted topics; retrying", zap.Error(err), zap.Duration("in", wait))
			if !sleep(l.ctx, wait) {
				return
			}
			continue
		}
		bo.Reset()
		l.watch(w, u, sweep.C)
		_ = w.Stop()
	}
}

// watch applies w's entries to u until w ends or the term does.
func (l *leader) watch(w jetstream.KeyWatcher, u *union, sweep <-chan time.Time) {
	for {
		select {
		case e, ok := <-w.Updates():
			if !ok {
				return
			}
			if e == nil { // the initial values are all in
				continue
			}
			now := time.Now()
			if e.Operation() != jetstream.KeyValuePut {
				u.remove(e.Key(), now)
				continue
			}
			topics, ok := decodeWants(e)
			if !ok {
				l.env.log.Warn("natsbridge: malformed wanted topics; ignored", zap.String("member", e.Key()))
				continue
			}
			u.update(e.Key(), topics, now)
			l.republishRefusals(topics)
		case now := <-sweep:
			u.sweep(now)
		case <-l.ctx.Done():
			return
		}
	}
}
