package kraken

import "github.com/wsfan/wsfan/internal/clock"

// WithClock makes the dead man's switch's refreshes on clk's time.
func WithClock(clk clock.Clock) LoginOption {
	return func(c *loginConfig) { c.clock = clk }
}

// RFC3339 is the stamp reader Classify and the book rules share.
var RFC3339 = rfc3339
