// Package pace keeps the request budgets of a venue as a client paces
// its requests against them (client.WithRateLimit, client.WithBudget):
// token buckets of credits, a request taking its method's cost from
// every limit that charges it. Subscribe and unsubscribe requests are
// asked about once, as protocol.SubscribeMethod and
// protocol.UnsubscribeMethod; once the server asks for heartbeat
// replies, every request leaves a reply's credits in the bucket, so a
// burst of calls never starves the reply.
package pace

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wsfan/wsfan/internal/clock"
	"github.com/wsfan/wsfan/internal/credit"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// Limit is a request budget: a bucket holding at most Burst credits,
// refilled at Rate credits a second, from which a request of method
// takes Cost(method) credits (nil: 1 for every request).
type Limit struct {
	Rate  float64
	Burst int
	Cost  func(method string) int
}

// Errors of a wait that ends before its credits are there.
var (
	// ErrPastDeadline: the credits would come after the context's
	// deadline, so the request fails at once.
	ErrPastDeadline = errors.New("past the request's deadline")
	// ErrStopped: the client's context ended.
	ErrStopped = errors.New("the client stopped")
)

// New returns a Pacer with no limits, waiting on clk.
func New(clk clock.Clock) *Pacer { return &Pacer{clock: clk} }

// SetClock makes p wait on clk (tests simulate waits so).
func (p *Pacer) SetClock(clk clock.Clock) { p.clock = clk }

// Add adds a limit. The costs of subscription requests and heartbeat
// replies are asked now, once. Add every limit before p is used.
func (p *Pacer) Add(l Limit) {
	pl := limit{cost: l.Cost, bucket: credit.New(l.Rate, float64(l.Burst))}
	pl.subscribe, pl.unsubscribe = pl.costOf(protocol.SubscribeMethod), pl.costOf(protocol.UnsubscribeMethod)
	pl.heartbeat = pl.costOf(protocol.HeartbeatReplyMethod)
	p.limits = append(p.limits, pl)
}

// Pacer applies the rate limits of one client, or of the clients that
// share it (client.WithBudget). Any goroutine may use it; a nil Pacer
// never waits and charges nothing.
type Pacer struct {
	clock clock.Clock

	mu     sync.Mutex // protects the buckets in limits
	limits []limit
	// heartbeats is set once the server asked for a heartbeat reply:
	// from then on requests leave a reply's credits in each bucket.
	heartbeats atomic.Bool
}

// limit is one Limit as the Pacer keeps it.
type limit struct {
	cost                   func(method string) int
	subscribe, unsubscribe int // the costs of subscription requests
	heartbeat              int // the cost of a heartbeat reply, kept in reserve
	bucket                 credit.Bucket
}

// Wait takes the credits of one request of method, waiting until they
// are there, ctx ends or the client closes (client ends). A nil pacer
// never waits.
func (p *Pacer) Wait(ctx, client context.Context, method string) error {
	if p == nil {
		return nil
	}
	var buf [4]int
	return p.WaitCosts(ctx, client, p.costs(buf[:0], method))
}

// WaitSubscribe takes the credits of one subscribe request, waiting as
// wait does; the round that sends it is then prepaid for one request
// (opRound.prepaid), or refundSubscribe gives them back when no request
// goes out.
func (p *Pacer) WaitSubscribe(ctx, client context.Context) error {
	if p == nil {
		return nil
	}
	var buf [4]int
	return p.WaitCosts(ctx, client, p.subscribeCosts(buf[:0]))
}

// RefundSubscribe gives back what waitSubscribe took.
func (p *Pacer) RefundSubscribe() {
	if p == nil {
		return
	}
	var buf [4]int
	p.refundCosts(p.subscribeCosts(buf[:0]))
}

// RoundRequests is how many subscribe requests the tightest limit that
// charges them holds at once (its burst over a request's cost, at least
// one); 0 when none charges them. A restore goes out in rounds of at
// most this many requests.
func (p *Pacer) RoundRequests() int {
	if p == nil {
		return 0
	}
	most := 0
	for i := range p.limits {
		l := &p.limits[i]
		if l.subscribe <= 0 {
			continue
		}
		n := max(int(l.bucket.Max()/float64(l.subscribe)), 1)
		if most == 0 || n < most {
			most = n
		}
	}
	return most
}

// WaitSubscribes takes the credits of n subscribe requests, waiting as
// wait does. A nil pacer, or n 0, takes nothing.
func (p *Pacer) WaitSubscribes(ctx, client context.Context, n int) error {
	if p == nil || n == 0 {
		return nil
	}
	var buf [4]int
	costs := p.subscribeCosts(buf[:0])
	for i := range costs {
		costs[i] *= n
	}
	return p.WaitCosts(ctx, client, costs)
}

// UnsubscribeCharged reports whether an unsubscribe request costs
// anything in some limit. A nil pacer charges nothing.
func (p *Pacer) UnsubscribeCharged() bool {
	if p == nil {
		return false
	}
	for i := range p.limits {
		if p.limits[i].unsubscribe > 0 {
			return true
		}
	}
	return false
}

// WaitUnsubscribe takes the credits of one unsubscribe request, waiting
// as wait does; the round that sends it is prepaid for one request, or
// RefundUnsubscribe gives them back when no request goes out.
func (p *Pacer) WaitUnsubscribe(ctx, client context.Context) error {
	var buf [4]int
	return p.WaitCosts(ctx, client, p.unsubscribeCosts(buf[:0]))
}

// RefundUnsubscribe gives back what waitUnsubscribe took.
func (p *Pacer) RefundUnsubscribe() {
	var buf [4]int
	p.refundCosts(p.unsubscribeCosts(buf[:0]))
}

// unsubscribeCosts appends what an unsubscribe request costs in each limit.
func (p *Pacer) unsubscribeCosts(dst []int) []int {
	for i := range p.limits {
		dst = append(dst, p.limits[i].unsubscribe)
	}
	return dst
}

// subscribeCosts appends what a subscribe request costs in each limit.
func (p *Pacer) subscribeCosts(dst []int) []int {
	for i := range p.limits {
		dst = append(dst, p.limits[i].subscribe)
	}
	return dst
}

// WaitCosts takes costs (one per limit), waiting until they are there.
func (p *Pacer) WaitCosts(ctx, client context.Context, costs []int) error {
	d := p.reserveCosts(costs)
	if d <= 0 {
		return nil
	}
	if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < d {
		p.refundCosts(costs)
		return fmt.Errorf("%w: the rate limit delays the request %v", ErrPastDeadline, d)
	}
	fire, stop := p.clock.After(d)
	select {
	case <-fire:
		return nil
	case <-ctx.Done():
		stop()
		p.refundCosts(costs)
		return ctx.Err()
	case <-client.Done():
		stop()
		return ErrStopped
	}
}

// ChargeBatch takes the credits of the requests in b, a subscribe (or
// unsubscribe) round, less prepaid requests (waitSubscribe), without
// waiting: they are sent at once, and whoever comes next waits for the
// debt. Every request counts, whether the dialect puts it in a message of
// its own or in a batch array (and every message, where the dialect has
// no request ids). A nil pacer charges nothing.
func (p *Pacer) ChargeBatch(b *protocol.Batch, subscribe bool, prepaid int) {
	if p == nil {
		return
	}
	n := max(len(b.Messages), len(b.Requests)) - prepaid
	if n < 0 { // fewer went out than were paid for: give the rest back
		costs := p.subscribeCosts(nil)
		if !subscribe {
			costs = p.unsubscribeCosts(nil)
		}
		for i := range costs {
			costs[i] *= -n
		}
		p.refundCosts(costs)
		return
	}
	if n == 0 {
		return
	}
	now := p.clock.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := range p.limits {
		l := &p.limits[i]
		cost := l.unsubscribe
		if subscribe {
			cost = l.subscribe
		}
		if cost > 0 {
			l.bucket.Reserve(now, float64(cost*n))
		}
	}
}

// reserveCosts takes costs (one per limit) and returns how long the
// slowest limit needs to refill them, and, once heartbeats are asked
// for, a heartbeat reply's credits beside them, which stay in the bucket.
func (p *Pacer) reserveCosts(costs []int) time.Duration {
	now := p.clock.Now()
	cushion := p.heartbeats.Load()
	var wait time.Duration
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, cost := range costs {
		if cost <= 0 {
			continue
		}
		l := &p.limits[i]
		if cushion && l.heartbeat > 0 {
			wait = max(wait, l.bucket.Reserve(now, float64(cost+l.heartbeat)))
			l.bucket.Refund(float64(l.heartbeat))
			continue
		}
		wait = max(wait, l.bucket.Reserve(now, float64(cost)))
	}
	return wait
}

// ChargeHeartbeat takes a heartbeat reply's credits without waiting: it
// goes out at once, on the credits the other requests left (see
// reserveCosts). A nil pacer charges nothing.
func (p *Pacer) ChargeHeartbeat() {
	if p == nil {
		return
	}
	p.heartbeats.Store(true)
	now := p.clock.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := range p.limits {
		if l := &p.limits[i]; l.heartbeat > 0 {
			l.bucket.Reserve(now, float64(l.heartbeat))
		}
	}
}

// refundCosts gives back what reserveCosts took.
func (p *Pacer) refundCosts(costs []int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, cost := range costs {
		if cost > 0 {
			p.limits[i].bucket.Refund(float64(cost))
		}
	}
}

// BatchCosts is what the calls of one batch cost together in each limit.
// A nil pacer charges nothing.
func (p *Pacer) BatchCosts(calls []protocol.Call) []int {
	if p == nil {
		return nil
	}
	var total []int
	for _, call := range calls {
		for i, cost := range p.costs(nil, call.Method) {
			if total == nil {
				total = make([]int, len(p.limits))
			}
			total[i] += cost
		}
	}
	return total
}

// costs appends to dst what a request of method costs in each limit,
// asking the users' Cost functions outside the lock. The limits are set
// before Dial returns and never change.
func (p *Pacer) costs(dst []int, method string) []int {
	for i := range p.limits {
		dst = append(dst, p.limits[i].costOf(method))
	}
	return dst
}

func (l *limit) costOf(method string) int {
	if l.cost == nil {
		return 1
	}
	return l.cost(method)
}
