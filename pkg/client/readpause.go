package client

import (
	"net"
	"syscall"
	"time"
)

// A ReadPause lets a connection that carries nothing of its own for now
// read its socket in batches. A composite's leg whose every frame is a
// copy another leg delivered first (package standby) would still wake,
// read and hash each one: at a steady 20,000 frames a second those
// wake-ups cost it more than the frames themselves. Waiting a moment
// before a read, once it has read everything its socket held, lets the
// frames gather in the kernel, to be read many in one call; and while it
// waits, the socket wakes no one for each frame that arrives (its
// receive low-water mark is raised to gatherBytes, where the system has
// one: Linux).
//
// The reader asks it before a read from the socket that follows a read
// the socket did not fill (every byte it had was taken), and not while a
// call on the connection waits for its answer; it waits the duration
// returned (none when zero). It runs on the connection's reader, and must
// be quick and safe for the readers of successive connections.
type ReadPause func() time.Duration

// WithReadPause has each of the client's connections ask p before reading
// a drained socket (ReadPause). Default: none; the reader reads at once.
func WithReadPause(p ReadPause) Option {
	return clientOption(func(c *config) { c.readPause = p })
}

// gatherBytes is the receive low-water mark of a socket while its reader
// pauses: half the read buffer (defaultDialer's 64 KiB), so that a
// socket that gathers that much wakes its reader early, and is read in
// one call.
const gatherBytes = 32 << 10

// pausingConn is the socket under a connection whose client has a
// ReadPause: it waits as the pause says before a read that follows a
// short one. Writes go straight to the embedded net.Conn (the writer's
// batchconn.Conn).
type pausingConn struct {
	net.Conn
	c     *Client
	pause ReadPause
	raw   syscall.RawConn // the TCP socket's, for its low-water mark; nil: none
	// drained: the last read did not fill its buffer. Owned by the
	// goroutine reading the socket: the handshake's, then the reader.
	drained bool
}

// newPausingConn wraps fc, whose socket is tcp, under c's pause.
func newPausingConn(c *Client, fc net.Conn, tcp net.Conn) *pausingConn {
	pc := &pausingConn{Conn: fc, c: c, pause: c.cfg.readPause}
	if sc, ok := tcp.(syscall.Conn); ok {
		pc.raw, _ = sc.SyscallConn()
	}
	return pc
}

// Read waits as the pause says when the socket was drained and no call
// waits for an answer, then reads.
func (pc *pausingConn) Read(p []byte) (int, error) {
	if pc.drained && pc.c.pendingCalls() == 0 {
		if d := pc.pause(); d > 0 {
			pc.lowWater(gatherBytes)
			time.Sleep(d)
			pc.lowWater(1)
		}
	}
	n, err := pc.Conn.Read(p)
	pc.drained = n < len(p)
	return n, err
}

// lowWater sets the socket's receive low-water mark to n bytes, where the
// system has one: until n bytes wait, the socket does not wake the
// runtime's poller. A read takes what waits all the same.
func (pc *pausingConn) lowWater(n int) {
	if pc.raw != nil {
		_ = pc.raw.Control(func(fd uintptr) { setLowWater(fd, n) })
	}
}
