package thalex

import "github.com/wsfan/wsfan/internal/clock"

// WithClock makes Login's tokens on clk's time.
func WithClock(clk clock.Clock) LoginOption {
	return func(c *loginConfig) { c.clock = clk }
}
