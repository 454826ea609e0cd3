package client

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wsfan/wsfan/internal/clock"
	"github.com/wsfan/wsfan/internal/connpace"
	"github.com/wsfan/wsfan/internal/credit"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// RateLimit is a request budget: a bucket holding at most Burst credits,
// refilled at Rate credits a second, from which every request takes
// Cost(method) credits. With every cost 1 it is a plain request rate,
// Rate requests a second in bursts of up to Burst; with costs per method
// it is an exchange's credit model (Deribit: 500 credits a request, at
// most 50,000, refilled at 10,000 a second).
type RateLimit struct {
	// Rate is the refill, in credits per second. It must be positive.
	Rate float64
	// Burst is the most credits the bucket holds, and so the largest
	// burst it lets through at once. It must be positive.
	Burst int
	// Cost is what a request of method costs. Nil charges 1 for every
	// request; a cost of 0 leaves the request to the other limits.
	// Subscribe and unsubscribe requests are asked about as
	// SubscribeMethod and UnsubscribeMethod, whatever the dialect calls
	// them, once, by Dial. It may be called from any goroutine.
	Cost func(method string) int
}

// The method names RateLimit.Cost is asked about for the requests the
// client makes on its own: subscribing and unsubscribing, in every
// dialect.
const (
	SubscribeMethod      = protocol.SubscribeMethod
	UnsubscribeMethod    = protocol.UnsubscribeMethod
	HeartbeatReplyMethod = protocol.HeartbeatReplyMethod
)

// WithRateLimit paces the client's requests to stay within limits, so a
// burst of calls waits for its turn instead of being refused by the
// server. A Call takes its credits before its request is written, waiting
// while a limit has none (in the order the calls came, until the call's
// context ends; a wait that would outlast the context's deadline fails at
// once with ErrTimeout). Subscribe waits likewise for the credits of one
// subscribe request; the others of a Subscribe of more topics than one
// request carries are charged at once, up to what the budget holds at
// once (its burst over a request's cost), and past that go out in rounds,
// each once its credits are there. The restore after a reconnect does the
// same: one batched write within the budget, rounds beyond it.
// Unsubscribes wait for one request's credits and charge the others. The
// dialect's handshake calls (Deribit's
// public/set_heartbeat) are paced like calls. A heartbeat reply (asked
// about as HeartbeatReplyMethod), sent by the reader, which never waits,
// goes out at once and is charged; once the server asks for them, every
// call and subscribe leaves one reply's credits in the bucket, so a burst
// of calls never starves the reply Deribit closes the connection without.
// Several limits may be
// given (Deribit's matching-engine and other requests); a request takes
// credits from every limit that charges it. The budget belongs to the
// client and outlives its connections.
// Default: the limits the exchange documents for every account
// (protocol.Venue.Limits: Deribit's subscriptions, deribit.ClientSubscribeLimit);
// WithRateLimit replaces them, and WithRateLimit() with no limit turns
// them off. A limit whose Rate or Burst is not positive makes Dial fail.
// The venue's pace of new connections (protocol.ConnectMethod: OKX's 3
// a second an IP) is not a request budget: it is kept whatever
// WithRateLimit sets, for the host, by every client of the process.
func WithRateLimit(limits ...RateLimit) Option {
	return clientOption(func(c *config) {
		for _, l := range limits {
			if !(l.Rate > 0) || l.Burst <= 0 {
				c.err = fmt.Errorf("wsfan: WithRateLimit: Rate %v and Burst %d must be positive", l.Rate, l.Burst)
				return
			}
		}
		c.paceSet = true
		c.addLimits(limits)
	})
}

// addLimits adds limits to the config's pacer.
func (c *config) addLimits(limits []RateLimit) {
	if len(limits) == 0 {
		return
	}
	p := c.pacer()
	for _, l := range limits {
		pl := paceLimit{cost: l.Cost, bucket: credit.New(l.Rate, float64(l.Burst))}
		// Asked now: subscribe rounds are charged under the client's
		// lock, where no user code runs.
		pl.subscribe, pl.unsubscribe = pl.costOf(SubscribeMethod), pl.costOf(UnsubscribeMethod)
		pl.heartbeat = pl.costOf(HeartbeatReplyMethod)
		p.limits = append(p.limits, pl)
	}
}

// exchangeLimits applies the protocol's documented limits (Dial): its
// pace of new connections always (connect.go), its request limits when
// the program set none.
func (c *config) exchangeLimits(documented []protocol.Limit) {
	var limits []RateLimit
	for _, l := range documented {
		if l.Cost != nil && l.Cost(protocol.ConnectMethod) > 0 {
			c.connectLimits = append(c.connectLimits, connpace.Limit{Rate: l.Rate, Burst: l.Burst, Cost: l.Cost(protocol.ConnectMethod)})
			continue
		}
		if !c.paceSet {
			limits = append(limits, RateLimit(l))
		}
	}
	c.addLimits(limits)
}

// pacer applies the rate limits of one client. Any goroutine may use it.
type pacer struct {
	clock clock.Clock

	mu     sync.Mutex // protects the buckets in limits
	limits []paceLimit
	// heartbeats is set once the server asked for a heartbeat reply:
	// from then on requests leave a reply's credits in each bucket.
	heartbeats atomic.Bool
}

type paceLimit struct {
	cost                   func(method string) int
	subscribe, unsubscribe int // the costs of subscription requests
	heartbeat              int // the cost of a heartbeat reply, kept in reserve
	bucket                 credit.Bucket
}

// pacer returns the config's pacer, making it on first use.
func (c *config) pacer() *pacer {
	if c.pace == nil {
		c.pace = &pacer{clock: clock.Real{}}
	}
	return c.pace
}

// wait takes the credits of one request of method, waiting until they
// are there, ctx ends or the client closes (client ends). A nil pacer
// never waits.
func (p *pacer) wait(ctx, client context.Context, method string) error {
	if p == nil {
		return nil
	}
	var buf [4]int
	return p.waitCosts(ctx, client, p.costs(buf[:0], method))
}

// waitSubscribe takes the credits of one subscribe request, waiting as
// wait does; the round that sends it is then prepaid for one request
// (opRound.prepaid), or refundSubscribe gives them back when no request
// goes out.
func (p *pacer) waitSubscribe(ctx, client context.Context) error {
	if p == nil {
		return nil
	}
	var buf [4]int
	return p.waitCosts(ctx, client, p.subscribeCosts(buf[:0]))
}

// refundSubscribe gives back what waitSubscribe took.
func (p *pacer) refundSubscribe() {
	if p == nil {
		return
	}
	var buf [4]int
	p.refundCosts(p.subscribeCosts(buf[:0]))
}

// roundRequests is how many subscribe requests the tightest limit that
// charges them holds at once (its burst over a request's cost, at least
// one); 0 when none charges them. A restore goes out in rounds of at
// most this many requests.
func (p *pacer) roundRequests() int {
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

// waitSubscribes takes the credits of n subscribe requests, waiting as
// wait does. A nil pacer, or n 0, takes nothing.
func (p *pacer) waitSubscribes(ctx, client context.Context, n int) error {
	if p == nil || n == 0 {
		return nil
	}
	var buf [4]int
	costs := p.subscribeCosts(buf[:0])
	for i := range costs {
		costs[i] *= n
	}
	return p.waitCosts(ctx, client, costs)
}

// unsubscribeCharged reports whether an unsubscribe request costs
// anything in some limit. A nil pacer charges nothing.
func (p *pacer) unsubscribeCharged() bool {
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

// waitUnsubscribe takes the credits of one unsubscribe request, waiting
// as wait does; the round that sends it is prepaid for one request, or
// refundUnsubscribe gives them back when no request goes out.
func (p *pacer) waitUnsubscribe(ctx, client context.Context) error {
	var buf [4]int
	return p.waitCosts(ctx, client, p.unsubscribeCosts(buf[:0]))
}

// refundUnsubscribe gives back what waitUnsubscribe took.
func (p *pacer) refundUnsubscribe() {
	var buf [4]int
	p.refundCosts(p.unsubscribeCosts(buf[:0]))
}

// unsubscribeCosts appends what an unsubscribe request costs in each limit.
func (p *pacer) unsubscribeCosts(dst []int) []int {
	for i := range p.limits {
		dst = append(dst, p.limits[i].unsubscribe)
	}
	return dst
}

// subscribeCosts appends what a subscribe request costs in each limit.
func (p *pacer) subscribeCosts(dst []int) []int {
	for i := range p.limits {
		dst = append(dst, p.limits[i].subscribe)
	}
	return dst
}

// waitCosts takes costs (one per limit), waiting until they are there.
func (p *pacer) waitCosts(ctx, client context.Context, costs []int) error {
	d := p.reserveCosts(costs)
	if d <= 0 {
		return nil
	}
	if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < d {
		p.refundCosts(costs)
		return fmt.Errorf("%w: the rate limit delays the request %v, past its deadline", ErrTimeout, d)
	}
	fire, stop := p.clock.After(d)
	select {
	case <-fire:
		return nil
	case <-ctx.Done():
		stop()
		p.refundCosts(costs)
		return ctxError(ctx, "waiting for the rate limit")
	case <-client.Done():
		stop()
		return ErrClosed
	}
}

// chargeBatch takes the credits of the requests in b, a subscribe (or
// unsubscribe) round, less prepaid requests (waitSubscribe), without
// waiting: they are sent at once, and whoever comes next waits for the
// debt. Every request counts, whether the dialect puts it in a message of
// its own or in a batch array (and every message, where the dialect has
// no request ids). A nil pacer charges nothing.
func (p *pacer) chargeBatch(b *protocol.Batch, subscribe bool, prepaid int) {
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
func (p *pacer) reserveCosts(costs []int) time.Duration {
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

// chargeHeartbeat takes a heartbeat reply's credits without waiting: it
// goes out at once, on the credits the other requests left (see
// reserveCosts). A nil pacer charges nothing.
func (p *pacer) chargeHeartbeat() {
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
func (p *pacer) refundCosts(costs []int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, cost := range costs {
		if cost > 0 {
			p.limits[i].bucket.Refund(float64(cost))
		}
	}
}

// batchCosts is what the calls of one batch cost together in each limit.
// A nil pacer charges nothing.
func (p *pacer) batchCosts(calls []protocol.Call) []int {
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
func (p *pacer) costs(dst []int, method string) []int {
	for i := range p.limits {
		dst = append(dst, p.limits[i].costOf(method))
	}
	return dst
}

func (l *paceLimit) costOf(method string) int {
	if l.cost == nil {
		return 1
	}
	return l.cost(method)
}
