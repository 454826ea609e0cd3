package sidecar

import (
	"context"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
)

// The pace of wrong tokens from one address: guardFreeFailures answered
// at once, then one every guardInterval (10 a second), whatever the
// number of connections they come on. The right token is never slowed.
const (
	guardFreeFailures = 64
	guardInterval     = 100 * time.Millisecond
	// guardMaxWaiting bounds the wrong-token requests of one address
	// held at once (so their wait, at most guardMaxWaiting ×
	// guardInterval, 1.6s, and the connections they hold): one more is
	// refused at once with 429 and Retry-After.
	guardMaxWaiting = 16
	// guardMaxAddresses bounds the addresses remembered; past it, the
	// addresses not yet known share one pace.
	guardMaxAddresses = 4096
)

// guardOverflow is the key the addresses past guardMaxAddresses share.
const guardOverflow = "*"

// tokenGuard slows down token guessing: it paces the wrong-token answers
// of each address (an IPv6 one by its /64) as a bucket of
// guardFreeFailures refilled one per guardInterval (GCRA). A wrong token
// past the bucket waits for its turn before its 401 is written; one
// finding guardMaxWaiting of its address already waiting is answered 429
// at once. The first slowed one of an episode (until the bucket is full
// again) is logged. It is only asked after a wrong token: a request with
// the right one never reaches it.
//
// The request handlers' goroutines call wait; the collector reads the
// counters and slowedAddresses.
type tokenGuard struct {
	// Set by newTokenGuard, read only after.
	log  *zap.Logger
	done <-chan struct{} // the Server closing ends every wait

	delayed   atomic.Uint64 // wrong tokens whose 401 waited
	throttled atomic.Uint64 // wrong tokens answered 429

	// mu protects addrs.
	mu    sync.Mutex
	addrs map[string]*guardEntry
}

// guardEntry is one address's pace.
type guardEntry struct {
	tat     time.Time // when the bucket is full again (GCRA's theoretical arrival time)
	waiting int       // its requests waiting now
	slowed  bool      // in an episode: the first slowed one was logged
}

func newTokenGuard(log *zap.Logger, done <-chan struct{}) *tokenGuard {
	return &tokenGuard{log: log, done: done, addrs: make(map[string]*guardEntry)}
}

// idleAt reports whether e can be forgotten at now: its bucket is full
// and nothing of it waits.
func (e *guardEntry) idleAt(now time.Time) bool { return e.waiting == 0 && !e.tat.After(now) }

// wait holds a request whose token was wrong, from remote (a RemoteAddr),
// until its turn. It returns 0 when the 401 may be written (at once, or
// after its wait, or when ctx or the Server ended it), or how long to
// come back after when the request is refused with 429.
func (g *tokenGuard) wait(ctx context.Context, remote string) time.Duration {
	key := guardKey(remote)
	now := time.Now()
	g.mu.Lock()
	e := g.entry(key, now)
	if e.idleAt(now) {
		e.slowed = false // the episode ended
	}
	tat := e.tat
	if tat.Before(now) {
		tat = now
	}
	tat = tat.Add(guardInterval)
	d := tat.Sub(now) - guardFreeFailures*guardInterval
	if d <= 0 {
		e.tat = tat
		g.mu.Unlock()
		return 0
	}
	if e.waiting >= guardMaxWaiting {
		g.mu.Unlock()
		g.throttled.Add(1)
		return d
	}
	e.tat, e.waiting = tat, e.waiting+1
	logIt := !e.slowed
	e.slowed = true
	g.mu.Unlock()

	g.delayed.Add(1)
	if logIt {
		g.log.Warn("slowing down wrong tokens from this address: beyond the first ones, each is answered after a delay, at most 10 a second; the right token is never delayed (counted in wsfan_sidecar_token_delayed_total)",
			zap.String("remote", key), zap.Int("free", guardFreeFailures), zap.Duration("interval", guardInterval))
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	case <-g.done:
	}
	g.mu.Lock()
	e.waiting--
	g.mu.Unlock()
	return 0
}

// entry returns key's entry, made if new. When guardMaxAddresses are
// remembered, the forgettable ones are forgotten first, and if none is,
// a new address shares guardOverflow's entry. Called with mu held.
func (g *tokenGuard) entry(key string, now time.Time) *guardEntry {
	if e, ok := g.addrs[key]; ok {
		return e
	}
	if len(g.addrs) >= guardMaxAddresses {
		for k, e := range g.addrs {
			if e.idleAt(now) {
				delete(g.addrs, k)
			}
		}
		if len(g.addrs) >= guardMaxAddresses {
			key = guardOverflow
			if e, ok := g.addrs[key]; ok {
				return e
			}
		}
	}
	e := &guardEntry{}
	g.addrs[key] = e
	return e
}

// slowedAddresses returns how many addresses are being slowed now.
func (g *tokenGuard) slowedAddresses() int {
	now := time.Now()
	g.mu.Lock()
	defer g.mu.Unlock()
	n := 0
	for _, e := range g.addrs {
		if e.slowed && !e.idleAt(now) {
			n++
		}
	}
	return n
}

// guardKey is the address remote's wrong tokens are paced by: its IP, or
// for IPv6 its /64, which one machine usually holds whole.
func guardKey(remote string) string {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	ip = ip.Unmap()
	if ip.Is6() {
		if p, err := ip.Prefix(64); err == nil {
			return p.String()
		}
	}
	return ip.String()
}
