package natsbridge

import (
	"sync/atomic"
	"time"
)

// fence is what a term may prove of its lease by its own clock. The
// lease cannot expire for the other members before the send time of its
// last successful write (the create that won it, or a renewal) plus the
// TTL: the server starts the TTL when it stores the write, after it was
// sent. The leader uses its upstream (publishes a message, forwards a
// call, subscribes or unsubscribes a topic) only while its monotonic
// clock is before that send time plus TTL/2, so every use is checked at
// least TTL/2 before another member can hold the lease. What the check
// cannot cover is a process stopped for longer than TTL/2 between a
// check and the use it allows (a few instructions), and a connection the
// stopped process cannot close: the exchange sees it open until the
// process runs again and closes it (docs/reliability.md, the group's
// table).
type fence struct {
	base  time.Time     // the term's start: the origin of until, read monotonically
	ttl   time.Duration // the lease TTL
	until atomic.Int64  // ns after base before which the lease is proven
}

// newFence starts a term's fence from the winning create, sent at won.
func newFence(won time.Time, ttl time.Duration) *fence {
	f := &fence{base: won, ttl: ttl}
	f.renewed(won)
	return f
}

// renewed moves the fence after a successful renewal sent at sent.
// Called by the candidate goroutine only.
func (f *fence) renewed(sent time.Time) {
	f.until.Store(int64(sent.Sub(f.base) + f.ttl/2))
}

// deadline is when the lease stops being proven.
func (f *fence) deadline() time.Time { return f.base.Add(time.Duration(f.until.Load())) }

// valid reports whether the lease is still proven now. Safe from any
// goroutine.
func (f *fence) valid() bool { return time.Since(f.base) < time.Duration(f.until.Load()) }
