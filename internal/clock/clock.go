// Package clock is the time source of code that waits or checks
// deadlines by the clock (request pacing, token lifetimes), so tests can
// run it on simulated time: Real is the system clock, Fake is moved by
// the test.
package clock

import "time"

// Clock tells the time and makes timers.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// After returns a channel that receives the time once d has passed,
	// and a function that stops the timer (reporting whether it did so
	// before the timer fired).
	After(d time.Duration) (<-chan time.Time, func() bool)
}

// Real is the system clock.
type Real struct{}

// Now returns time.Now().
func (Real) Now() time.Time { return time.Now() }

// After starts a time.Timer.
func (Real) After(d time.Duration) (<-chan time.Time, func() bool) {
	t := time.NewTimer(d)
	return t.C, t.Stop
}
