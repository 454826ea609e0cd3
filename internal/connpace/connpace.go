// Package connpace paces the opening of connections to a host for the
// whole process: a venue that limits new connections per IP (OKX: 3 a
// second) counts every connection this process opens, whichever client,
// pool or standby opens it, so they wait on one bucket per host. Other
// processes on the same address are not coordinated: each keeps its own
// pace, and together they may pass the venue's limit.
//
// A bucket holds at most burst credits, refilled at rate a second, and a
// connection takes its credits at the moment it may go, never ahead of
// time: a waiter delayed by a loaded machine does not let the next one go
// early, so the connections of any window never pass what the bucket
// allows.
package connpace

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/wsfan/wsfan/internal/clock"
	"github.com/wsfan/wsfan/internal/credit"
)

// Limit is a pace of new connections: at most Burst credits, refilled at
// Rate a second, Cost credits a connection.
type Limit struct {
	Rate  float64
	Burst int
	Cost  int
}

// process is the pacer every Wait shares.
var process = newPacer(clock.Real{})

// Wait returns once a new connection to host (a URL's host[:port], case
// ignored) may be opened under l, taking its credits, or with ctx's error
// when ctx ends first. Callers waiting on the same host and limit share
// its bucket; a limit whose Rate, Burst or Cost is not positive never
// waits.
func Wait(ctx context.Context, host string, l Limit) error {
	return process.wait(ctx, host, l)
}

// pacer holds a bucket per host and limit. Any goroutine may use it.
type pacer struct {
	clock clock.Clock

	mu      sync.Mutex // protects buckets and every bucket in it
	buckets map[key]*credit.Bucket
}

// key names a bucket: a host and the limit kept for it (two venues'
// limits for one host, unlikely as that is, do not share credits).
type key struct {
	host string
	l    Limit
}

func newPacer(c clock.Clock) *pacer {
	return &pacer{clock: c, buckets: make(map[key]*credit.Bucket)}
}

func (p *pacer) wait(ctx context.Context, host string, l Limit) error {
	if !(l.Rate > 0) || l.Burst <= 0 || l.Cost <= 0 {
		return nil
	}
	k := key{host: strings.ToLower(host), l: l}
	for {
		d := p.take(k)
		if d == 0 {
			return nil
		}
		fire, stop := p.clock.After(d)
		select {
		case <-fire:
		case <-ctx.Done():
			stop()
			return ctx.Err()
		}
	}
}

// take takes k's credits when its bucket holds them now (0), or returns
// how long until it will, taking nothing.
func (p *pacer) take(k key) time.Duration {
	now := p.clock.Now()
	cost := float64(k.l.Cost)
	p.mu.Lock()
	defer p.mu.Unlock()
	b := p.buckets[k]
	if b == nil {
		nb := credit.New(k.l.Rate, float64(max(k.l.Burst, k.l.Cost)))
		b = &nb
		p.buckets[k] = b
	}
	if b.Take(now, cost) {
		return 0
	}
	// How long the missing credits take to refill: a reservation given
	// back at once.
	d := b.Reserve(now, cost)
	b.Refund(cost)
	return max(d, time.Millisecond)
}
