package clock

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"
)

// Fake is a clock that moves only when told to, for tests that simulate
// seconds or hours without sleeping. It is safe for concurrent use.
type Fake struct {
	mu      sync.Mutex // protects the following
	now     time.Time
	timers  []*fakeTimer  // pending, in no particular order
	changed chan struct{} // closed and replaced on every change
}

type fakeTimer struct {
	due time.Time
	c   chan time.Time // capacity 1: firing never blocks
}

// NewFake returns a fake clock set to start.
func NewFake(start time.Time) *Fake {
	return &Fake{now: start, changed: make(chan struct{})}
}

// Now returns the fake time.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// After returns a timer that fires when the fake time reaches now + d
// (at once when d <= 0).
func (f *Fake) After(d time.Duration) (<-chan time.Time, func() bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	t := &fakeTimer{due: f.now.Add(d), c: make(chan time.Time, 1)}
	if d <= 0 {
		t.c <- f.now
		return t.c, func() bool { return false }
	}
	f.timers = append(f.timers, t)
	f.notifyLocked()
	return t.c, func() bool { return f.stop(t) }
}

func (f *Fake) stop(t *fakeTimer) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	i := slices.Index(f.timers, t)
	if i < 0 {
		return false
	}
	f.timers = slices.Delete(f.timers, i, i+1)
	f.notifyLocked()
	return true
}

// Timers returns how many timers are waiting to fire.
func (f *Fake) Timers() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.timers)
}

// Changed returns a channel closed at the next change: a timer started,
// stopped or fired, or the time moved. Take it before reading the state
// it guards, then wait on it.
func (f *Fake) Changed() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.changed
}

// WaitTimers waits until at least n timers are waiting to fire.
func (f *Fake) WaitTimers(ctx context.Context, n int) error {
	for {
		changed := f.Changed()
		have := f.Timers()
		if have >= n {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("waiting for %d timers, have %d: %w", n, have, ctx.Err())
		}
	}
}

// Advance moves the time forward by d and fires every timer now due.
func (f *Fake) Advance(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.setLocked(f.now.Add(d))
}

// AdvanceToNext moves the time to the earliest pending timer and fires
// every timer then due. It reports false, leaving the time alone, when no
// timer is pending.
func (f *Fake) AdvanceToNext() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.timers) == 0 {
		return false
	}
	next := f.timers[0].due
	for _, t := range f.timers[1:] {
		if t.due.Before(next) {
			next = t.due
		}
	}
	f.setLocked(next)
	return true
}

func (f *Fake) setLocked(now time.Time) {
	if now.After(f.now) {
		f.now = now
	}
	f.timers = slices.DeleteFunc(f.timers, func(t *fakeTimer) bool {
		if t.due.After(f.now) {
			return false
		}
		t.c <- f.now
		return true
	})
	f.notifyLocked()
}

func (f *Fake) notifyLocked() {
	close(f.changed)
	f.changed = make(chan struct{})
}
