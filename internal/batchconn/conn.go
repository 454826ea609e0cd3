// Package batchconn gathers several WebSocket messages into one write(2).
//
// gorilla writes every message to its net.Conn separately. A Conn sits
// under gorilla (client side: from the dialer's NetDialContext; server
// side: from the hijacked connection) and, while corked, appends writes to
// a buffer that Flush writes at once. Writes made while not corked go
// straight through, so control frames gorilla writes from other
// goroutines (pongs, close) are never held back for long and never
// interleave with a batch: one mutex serializes every write.
package batchconn

import (
	"bufio"
	"net"
	"net/http"
	"sync"
)

// maxRetained caps the buffer kept between batches.
const maxRetained = 256 << 10

// Conn is a net.Conn whose writes can be gathered.
type Conn struct {
	net.Conn

	mu     sync.Mutex // protects corked and buf, and serializes writes
	corked bool
	buf    []byte
}

// New wraps c.
func New(c net.Conn) *Conn { return &Conn{Conn: c} }

// Write appends p to the batch while corked and writes it otherwise.
func (c *Conn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.corked {
		c.buf = append(c.buf, p...)
		return len(p), nil
	}
	return c.Conn.Write(p)
}

// Cork starts gathering writes.
func (c *Conn) Cork() {
	c.mu.Lock()
	c.corked = true
	c.mu.Unlock()
}

// Flush writes what was gathered in one call and stops gathering.
func (c *Conn) Flush() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.corked = false
	if len(c.buf) == 0 {
		return nil
	}
	_, err := c.Conn.Write(c.buf)
	if cap(c.buf) > maxRetained {
		c.buf = nil
	} else {
		c.buf = c.buf[:0]
	}
	return err
}

// Hijacker wraps an http.ResponseWriter so that a WebSocket upgrade on it
// runs over a Conn; Hijacked returns that Conn after the upgrade.
type Hijacker struct {
	http.ResponseWriter
	conn *Conn
}

// Hijack implements http.Hijacker.
func (h *Hijacker) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	nc, brw, err := h.ResponseWriter.(http.Hijacker).Hijack()
	if err != nil {
		return nil, nil, err
	}
	h.conn = New(nc)
	return h.conn, brw, nil
}

// Hijacked returns the Conn of a successful upgrade, or nil.
func (h *Hijacker) Hijacked() *Conn { return h.conn }
