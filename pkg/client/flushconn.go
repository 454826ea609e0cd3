package client

import (
	"net"
	"sync"
)

// flushConn lets the writer goroutine gather several WebSocket messages
// into one write(2). While corked, writes are appended to a buffer; Flush
// writes the buffer at once. gorilla writes control frames (pongs) from
// the reader goroutine too; they go through the same lock, so bytes are
// never interleaved, and while corked they simply join the batch.
type flushConn struct {
	net.Conn

	mu     sync.Mutex // protects the following and serializes writes
	corked bool
	buf    []byte
}

// maxRetainedBuffer caps the buffer kept between batches.
const maxRetainedBuffer = 256 << 10

func (c *flushConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.corked {
		c.buf = append(c.buf, p...)
		return len(p), nil
	}
	return c.Conn.Write(p)
}

// Cork starts gathering writes.
func (c *flushConn) Cork() {
	c.mu.Lock()
	c.corked = true
	c.mu.Unlock()
}

// Flush writes what was gathered in one call and stops gathering.
func (c *flushConn) Flush() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.corked = false
	if len(c.buf) == 0 {
		return nil
	}
	_, err := c.Conn.Write(c.buf)
	if cap(c.buf) > maxRetainedBuffer {
		c.buf = nil
	} else {
		c.buf = c.buf[:0]
	}
	return err
}
