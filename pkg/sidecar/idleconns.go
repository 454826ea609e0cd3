package sidecar

import (
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// defaultIdleConnTimeout is Config.IdleConnTimeout's default: how long a
// keep-alive connection may sit without a request after its last.
const defaultIdleConnTimeout = 5 * time.Second

// reapMinIdle is how long a connection that is not a client must have sat
// idle before a full listener closes it to make room: long enough that a
// client whose request is on its way is never taken for an idle one.
const reapMinIdle = time.Second

// reapCheck is how often a full listener looks again for idle
// connections to close, when none has closed by itself meanwhile.
const reapCheck = 100 * time.Millisecond

// idleConns follows the listener's connections so that those that are not
// clients cannot keep clients out. net/http closes a connection that sends
// no request within headerTimeout (http.Server.ReadHeaderTimeout), and one
// that sends none after its last within Config.IdleConnTimeout
// (IdleTimeout); idleConns counts the
// connections open and, when they reach the cap (Config.MaxClients plus
// connectionMargin, the LimitListener's), closes at once those idle for
// reapMinIdle or more, so the connections waiting in the kernel's accept
// queue are taken. Idle means net/http's StateNew (no request yet) or
// StateIdle (between keep-alive requests): a WebSocket client
// (StateHijacked) and an SSE, status or book stream (StateActive while it
// streams) are never idle, and never closed by it.
//
// The accept loop (net/http's Serve goroutine) waits for room and reaps;
// the connections' goroutines report their states (connState) and their
// closes (trackedConn.Close).
type idleConns struct {
	// Set by newIdleConns, read only after.
	max int

	reaped atomic.Uint64 // idle connections closed to make room

	// freed is signalled (without blocking) when a connection closes.
	freed chan struct{}

	// mu protects the following.
	mu   sync.Mutex
	open int                       // connections accepted and not closed
	idle map[net.Conn]time.Time    // the open ones idle, and since when
	live map[*trackedConn]struct{} // every open one, so a late state report of a closed one is ignored
}

func newIdleConns(maxConns int) *idleConns {
	return &idleConns{max: maxConns, freed: make(chan struct{}, 1),
		idle: make(map[net.Conn]time.Time), live: make(map[*trackedConn]struct{})}
}

// listener returns ln (already capped by netutil.LimitListener at max)
// behind the wait for room: its Accept reaps idle connections while max
// are open.
func (ic *idleConns) listener(ln net.Listener) net.Listener {
	return &reapListener{Listener: ln, conns: ic, done: make(chan struct{})}
}

// connState is the http.Server's ConnState hook: it marks a connection
// idle when it has no request, and not idle when it has one, was
// hijacked (a WebSocket) or closed.
func (ic *idleConns) connState(c net.Conn, st http.ConnState) {
	tc, ok := c.(*trackedConn)
	if !ok {
		return
	}
	ic.mu.Lock()
	defer ic.mu.Unlock()
	switch st {
	case http.StateNew, http.StateIdle:
		if _, open := ic.live[tc]; open {
			ic.idle[c] = time.Now()
		}
	default:
		delete(ic.idle, c)
	}
}

// opened counts a connection accepted and returns it wrapped so that its
// close is counted.
func (ic *idleConns) opened(c net.Conn) net.Conn {
	tc := &trackedConn{Conn: c, conns: ic}
	ic.mu.Lock()
	ic.open++
	ic.live[tc] = struct{}{}
	ic.mu.Unlock()
	return tc
}

// closed forgets a connection that closed, and signals the room.
func (ic *idleConns) closed(tc *trackedConn) {
	ic.mu.Lock()
	if _, open := ic.live[tc]; open {
		delete(ic.live, tc)
		delete(ic.idle, tc)
		ic.open--
	}
	ic.mu.Unlock()
	select {
	case ic.freed <- struct{}{}:
	default:
	}
}

// waitRoom returns once fewer than max connections are open, closing
// meanwhile those idle for reapMinIdle or more; it returns net.ErrClosed
// when done is closed first. It runs on the accept loop.
func (ic *idleConns) waitRoom(done <-chan struct{}) error {
	var tick *time.Ticker
	for !ic.roomOrReap(time.Now()) {
		if tick == nil {
			tick = time.NewTicker(reapCheck)
			defer tick.Stop()
		}
		select {
		case <-done:
			return net.ErrClosed
		case <-ic.freed:
		case <-tick.C:
		}
	}
	return nil
}

// roomOrReap reports whether there is room for one more connection; if
// not, it closes every connection idle since reapMinIdle before now (the
// room comes when their closes are counted).
func (ic *idleConns) roomOrReap(now time.Time) bool {
	ic.mu.Lock()
	if ic.open < ic.max {
		ic.mu.Unlock()
		return true
	}
	var reap []net.Conn
	for c, since := range ic.idle {
		if now.Sub(since) >= reapMinIdle {
			reap = append(reap, c)
			delete(ic.idle, c) // a request arriving now finds it closed, as with net/http's own idle close
		}
	}
	ic.mu.Unlock()
	for _, c := range reap {
		_ = c.Close()
	}
	ic.reaped.Add(uint64(len(reap)))
	return false
}

// openConns returns how many connections are open.
func (ic *idleConns) openConns() int {
	ic.mu.Lock()
	defer ic.mu.Unlock()
	return ic.open
}

// reapListener waits for room (idleConns.waitRoom) before each Accept.
type reapListener struct {
	net.Listener
	conns     *idleConns
	done      chan struct{} // closed by Close
	closeOnce sync.Once
}

// Accept waits for room, then accepts a connection and tracks it.
func (l *reapListener) Accept() (net.Conn, error) {
	if err := l.conns.waitRoom(l.done); err != nil {
		return nil, err
	}
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return l.conns.opened(c), nil
}

// Close ends a wait for room and closes the listener.
func (l *reapListener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// trackedConn is an accepted connection whose close idleConns counts. It
// is the net.Conn net/http serves and hijacks, so a WebSocket client's
// close is counted too.
type trackedConn struct {
	net.Conn
	conns     *idleConns
	closeOnce sync.Once
}

// Close closes the connection and counts it closed, once.
func (c *trackedConn) Close() error {
	err := c.Conn.Close()
	c.closeOnce.Do(func() { c.conns.closed(c) })
	return err
}
