package deribit

import "github.com/wsfan/wsfan/internal/clock"

// WithClock makes Login's signatures and token refreshes on clk's time.
func WithClock(clk clock.Clock) LoginOption {
	return func(c *loginConfig) { c.clock = clk }
}
