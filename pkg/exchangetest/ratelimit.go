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
// {"ok":false,"code":"RATE_LIMIT_IP"}. The default is the venue's own
// per-connection budget where it documents one (venue.Exchange.RequestLimit:
// OKX's 480 subscribe, unsubscribe and login requests an hour, refused
// with 60014), else no limit. It panics
// if rate or burst is not positive.
func WithRateLimit(rate float64, burst int) Option {
	if !(rate > 0) || burst <= 0 {
		panic("exchangetest: WithRateLimit: rate and burst must be positive")
	}
	return func(c *config) { c.rate = &rateConfig{rate: rate, burst: burst} }
}

// bucket returns a new connection's budget: WithRateLimit's, else the
// venue's documented one (venue.Exchange.RequestLimit); without either,
// one never used.
func (s *Server) bucket() credit.Bucket {
	switch r, l := s.cfg.rate, s.ex.RequestLimit; {
	case r != nil:
		return credit.New(r.rate, float64(r.burst))
	case l != nil:
		return credit.New(l.Rate, float64(l.Burst))
	}
	return credit.Bucket{}
}

// allow takes a request of method from c's budget, reporting whether
// there was room: one credit under WithRateLimit, what the venue's
// documented limit charges it otherwise. It runs on c's reader
// goroutine.
func (c *conn) allow(method string) bool {
	cost := 1
	switch l := c.s.ex.RequestLimit; {
	case c.s.cfg.rate != nil:
	case l != nil:
		cost = l.Cost(method)
	default:
		return true
	}
	return cost == 0 || c.limit.Take(c.s.cfg.now(), float64(cost))
}
