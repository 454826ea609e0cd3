// Package endpoints is a client's list of the endpoints of one service:
// the URLs it may dial in order of preference, which one is in use, the
// order a failover tries them in, where a replacement list puts the one
// in use, and when the preferred one has answered probes long enough to
// be taken back.
//
// One goroutine, the client's supervisor, changes a List; any goroutine
// reads it.
package endpoints

import (
	"maps"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Endpoint is one URL a client may dial: as dialled (userinfo taken out
// into Header) and as shown in logs, errors and metrics (redacted).
type Endpoint struct {
	URL    string
	Header http.Header
	Shown  string
}

// Same reports whether e and o dial the same URL with the same header.
func (e Endpoint) Same(o Endpoint) bool {
	return e.URL == o.URL && maps.EqualFunc(e.Header, o.Header, slices.Equal)
}

// List is the endpoints, in order of preference, and the index of the
// one in use or being dialled. Its writer (the supervisor) replaces both
// under mu and reads them freely; other goroutines read them with All,
// Current or Shown.
type List struct {
	mu      sync.RWMutex
	eps     []Endpoint
	current atomic.Int32
	// base is how far the shown indices are moved round: a standby's leg
	// lists the standby's endpoints from its own, and counts in the
	// standby's list.
	base int
}

// New returns the list eps (at least one) with the first in use; base
// moves the indices Shown gives round the list.
func New(eps []Endpoint, base int) *List {
	return &List{eps: eps, base: base}
}

// All returns the endpoints and the index of the one in use, read
// together.
func (l *List) All() ([]Endpoint, int) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.eps, int(l.current.Load())
}

// InUse returns the endpoint in use or being dialled and its index as
// Shown gives it, read together.
func (l *List) InUse() (Endpoint, int) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	i := int(l.current.Load())
	return l.eps[i], (i + l.base) % len(l.eps)
}

// Get returns endpoint i.
func (l *List) Get(i int) Endpoint {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.eps[i]
}

// Len is how many endpoints there are.
func (l *List) Len() int {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return len(l.eps)
}

// Current is the index of the endpoint in use or being dialled.
func (l *List) Current() int { return int(l.current.Load()) }

// Use makes endpoint i the one in use. For the writer.
func (l *List) Use(i int) { l.current.Store(int32(i)) }

// OnPreferred reports whether the first endpoint is in use.
func (l *List) OnPreferred() bool { return l.current.Load() == 0 }

// Shown is the index of endpoint i as logs, events and metrics count
// it (see New's base).
func (l *List) Shown(i int) int {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return (i + l.base) % len(l.eps)
}

// Next returns the endpoint the attempt-th attempt (from 1) after
// endpoint failed failed dials, and whether the backoff wait goes before
// it: round the list from the next one, the wait only once every
// endpoint has failed in a row, so one that accepts and drops is not
// dialled more often than the backoff allows. For the writer.
func (l *List) Next(failed, attempt int) (index int, wait bool) {
	n := len(l.eps)
	return (failed + attempt) % n, attempt%n == 0
}

// Adopt makes eps the endpoints, current the one in use. For the writer.
func (l *List) Adopt(eps []Endpoint, current int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.eps = eps
	l.current.Store(int32(current))
}

// Find returns the index in eps of the endpoint in use, and false when
// eps does not hold it. For the writer.
func (l *List) Find(eps []Endpoint) (int, bool) {
	i := slices.IndexFunc(eps, l.eps[l.Current()].Same)
	return i, i >= 0
}

// Series calls f once for each distinct endpoint as shown, and whether
// it is the one in use: the metric's series, one for an endpoint given
// twice.
func (l *List) Series(f func(shown string, inUse bool)) {
	eps, current := l.All()
	for i, ep := range eps {
		if !slices.ContainsFunc(eps[:i], func(e Endpoint) bool { return e.Shown == ep.Shown }) {
			f(ep.Shown, ep.Shown == eps[current].Shown)
		}
	}
}

// Probation is how long the preferred endpoint has answered every probe
// while another is in use. Its zero value has seen no answer. Owned by
// one goroutine.
type Probation struct {
	since time.Time
}

// Answered records a probe at now, answered or not, and reports whether
// the endpoint has answered every probe for at least after. A probe not
// answered starts the period again.
func (p *Probation) Answered(now time.Time, ok bool, after time.Duration) bool {
	switch {
	case !ok:
		p.since = time.Time{}
		return false
	case p.since.IsZero():
		p.since = now
	}
	return now.Sub(p.since) >= after
}

// Reset starts the period again: the endpoint in use changed.
func (p *Probation) Reset() { p.since = time.Time{} }
