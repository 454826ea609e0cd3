package client

import (
	"context"
	"errors"
	"fmt"

	"github.com/wsfan/wsfan/internal/clock"
	"github.com/wsfan/wsfan/internal/connpace"
	"github.com/wsfan/wsfan/internal/pace"
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
		p.Add(pace.Limit(l))
	}
}

// pacer returns the config's pacer, making it on first use.
func (c *config) pacer() *pace.Pacer {
	if c.pace == nil {
		c.pace = pace.New(clock.Real{})
	}
	return c.pace
}

// paceErr is the client's error for a wait of the pacer that failed.
func paceErr(ctx context.Context, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, pace.ErrStopped):
		return ErrClosed
	case errors.Is(err, pace.ErrPastDeadline):
		return fmt.Errorf("%w: %w", ErrTimeout, err)
	}
	return ctxError(ctx, "waiting for the rate limit")
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
