package auth

import "github.com/wsfan/wsfan/internal/clock"

// WithThalexClock makes Thalex's tokens on clk's time.
func WithThalexClock(clk clock.Clock) ThalexOption {
	return func(c *thalexConfig) { c.clock = clk }
}

// WithDeribitClock makes Deribit's signatures and token refreshes on
// clk's time.
func WithDeribitClock(clk clock.Clock) DeribitOption {
	return func(c *deribitConfig) { c.clock = clk }
}
