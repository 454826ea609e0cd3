package exchangetest

import "github.com/wsfan/wsfan/internal/credit"

// rateConfig is a request limit per connection.
type rateConfig struct {
	rate  float64
	burst int
}

// WithRateLimit limits every connection to rate requests a second in
// bursts of up to burst, each request of a batch array counting once (on
// the clock of WithClock). A request over the limit is refused with the
// dialect's own error: Thalex 4 "throttle exceeded", Deribit 10028
// "too_many_requests", Ethereum -32005 "limit exceeded". Where the venue
// ends the session with it (venue.Exchange.ThrottleEndsSession: Deribit),
// the connection is closed once the refusal is written. Ethereal's
// budget charges subscribe events (its system-limits page: points are
// charged on connecting and on subscribing), refused with
// {"ok":false,"code":"RATE_LIMIT_IP"}. The default is no limit. It panics
// if rate or burst is not positive.
func WithRateLimit(rate float64, burst int) Option {
	if !(rate > 0) || burst <= 0 {
		panic("exchangetest: WithRateLimit: rate and burst must be positive")
	}
	return func(c *config) { c.rate = &rateConfig{rate: rate, burst: burst} }
}

// bucket returns a new connection's budget; without a limit, one never
// used.
func (r *rateConfig) bucket() credit.Bucket {
	if r == nil {
		return credit.Bucket{}
	}
	return credit.New(r.rate, float64(r.burst))
}

// allow takes one request from c's budget, reporting whether there was
// room. It runs on c's reader goroutine.
func (c *conn) allow() bool {
	return c.s.cfg.rate == nil || c.limit.Take(c.s.cfg.now(), 1)
}
