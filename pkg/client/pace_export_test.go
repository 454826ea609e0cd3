package client

import "github.com/wsfan/wsfan/internal/clock"

// WithPaceClock runs the rate limits on clk, so tests simulate their
// waits instead of sleeping.
func WithPaceClock(clk clock.Clock) Option {
	return clientOption(func(c *config) { c.pacer().SetClock(clk) })
}
