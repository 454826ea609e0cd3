package pace

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/wsfan/wsfan/internal/clock"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// deribitMatching are Deribit's matching-engine methods, charged by a
// limit of their own.
var deribitMatching = map[string]bool{"private/buy": true, "private/sell": true, "private/edit": true, "private/cancel": true}

func deribitLimits() []Limit {
	return []Limit{
		{Rate: 5, Burst: 20, Cost: func(m string) int {
			if deribitMatching[m] {
				return 1
			}
			return 0
		}},
		{Rate: 10_000, Burst: 50_000, Cost: func(m string) int {
			if deribitMatching[m] {
				return 0
			}
			return 500
		}},
	}
}

// newPacer returns a Pacer of limits on clk.
func newPacer(clk clock.Clock, limits ...Limit) *Pacer {
	p := New(clk)
	for _, l := range limits {
		p.Add(l)
	}
	return p
}

// Deribit's credit model: each request takes its cost from the limits
// that charge its method, and only from those.
func TestPacerChargesEachMethodItsCost(t *testing.T) {
	p := newPacer(clock.NewFake(time.Unix(0, 0)), deribitLimits()...)
	for i := range 100 {
		assert.Zero(t, reserveOf(p, "public/get_instruments"), "request %d of the burst", i)
	}
	assert.Equal(t, 50*time.Millisecond, reserveOf(p, "public/get_instruments"), "500 credits at 10,000 a second")
	for i := range 20 {
		assert.Zero(t, reserveOf(p, "private/buy"), "order %d: other requests used other credits", i)
	}
	assert.Equal(t, 200*time.Millisecond, reserveOf(p, "private/cancel"))
	assert.Equal(t, 100*time.Millisecond, reserveOf(p, protocol.SubscribeMethod),
		"a subscribe request queues behind the other non-matching requests")
	p.ChargeBatch(&protocol.Batch{Messages: make([][]byte, 1), Requests: make([]protocol.Request, 2)}, true, 0)
	assert.Equal(t, 250*time.Millisecond, reserveOf(p, "public/get_time"), "a subscribe round of two requests took 1,000 credits")
	p.ChargeBatch(&protocol.Batch{Messages: make([][]byte, 3), Requests: make([]protocol.Request, 1)}, false, 0)
	assert.Equal(t, 450*time.Millisecond, reserveOf(p, "public/get_time"), "three unsubscribe messages took 1,500 credits")
}

func TestPacerWaitEndsWithTheClient(t *testing.T) {
	p := newPacer(clock.NewFake(time.Unix(0, 0)), Limit{Rate: 1, Burst: 1})
	client, closeClient := context.WithCancel(context.Background())
	assert.NoError(t, p.Wait(context.Background(), client, "m"))
	closeClient()
	assert.ErrorIs(t, p.Wait(context.Background(), client, "m"), ErrStopped)
}

// BenchmarkPaceUnlimited is what a limit costs a call while it has
// credits to spare; BenchmarkPaceNone is the cost without a limit.
func BenchmarkPaceUnlimited(b *testing.B) {
	p := newPacer(clock.Real{}, Limit{Rate: 1e12, Burst: 1 << 40})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := p.Wait(ctx, ctx, "public/ticker"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPaceUnlimitedDeribit(b *testing.B) {
	p := newPacer(clock.Real{}, Limit{Rate: 1e12, Burst: 1 << 40, Cost: func(m string) int {
		if deribitMatching[m] {
			return 0
		}
		return 500
	}}, Limit{Rate: 1e12, Burst: 1 << 40, Cost: func(m string) int {
		if deribitMatching[m] {
			return 1
		}
		return 0
	}})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := p.Wait(ctx, ctx, "private/buy"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPaceNone(b *testing.B) {
	var p *Pacer
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := p.Wait(ctx, ctx, "public/ticker"); err != nil {
			b.Fatal(err)
		}
	}
}

// reserveOf takes the credits of one request of method and returns how
// long they take to refill.
func reserveOf(p *Pacer, method string) time.Duration {
	var buf [4]int
	return p.reserveCosts(p.costs(buf[:0], method))
}

// Once the server asks for heartbeats, calls leave a reply's credits in
// the bucket: a burst of calls waits rather than take them, and the
// reply goes out at once on what was kept (Deribit closes a connection
// whose test_request goes unanswered, and charges public/test like any
// other request).
func TestPacerKeepsCreditsForHeartbeatReplies(t *testing.T) {
	clk := clock.NewFake(time.Unix(0, 0))
	p := newPacer(clk, Limit{Rate: 1, Burst: 3})
	for i := range 3 {
		assert.Zero(t, reserveOf(p, "public/get_time"), "call %d: no heartbeat asked for yet", i)
	}

	p = newPacer(clk, Limit{Rate: 1, Burst: 3})
	p.ChargeHeartbeat() // the server asked: 2 credits left
	assert.Zero(t, reserveOf(p, "public/get_time"), "1 left: a reply's worth")
	assert.Equal(t, time.Second, reserveOf(p, "public/get_time"), "the next call waits rather than take the reply's credit")
	clk.Advance(2 * time.Second) // the call's credit and the kept one
	p.ChargeHeartbeat()
	assert.Equal(t, time.Second, reserveOf(p, protocol.SubscribeMethod), "a subscribe keeps the reserve as well")

	free := newPacer(clk, Limit{Rate: 1, Burst: 3, Cost: func(m string) int {
		if m == protocol.HeartbeatReplyMethod {
			return 0
		}
		return 1
	}})
	free.ChargeHeartbeat()
	for i := range 3 {
		assert.Zero(t, reserveOf(free, "public/get_time"), "call %d: replies cost nothing here, nothing is kept", i)
	}
}
