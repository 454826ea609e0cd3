package standby

import (
	"context"
	"net"
	"syscall"
	"time"

	"github.com/gorilla/websocket"

	"github.com/wsfan/wsfan/pkg/client"
)

// A leg trails while the last notification it hashed was a copy dropped
// here (copies.go): another leg is ahead of it, and everything it reads is
// work thrown away. At a steady pace its reader would still wake for each
// frame, and the wake-ups cost more than the frames (most of a standby's
// cost at 20,000 frames a second). So a trailing leg that has read all
// its socket held waits trailWait before reading it again, while another
// leg leads, and not while a call waits on it for its answer: the frames
// gather in the kernel, to be read many in one call. While it waits, its
// socket's receive low-water mark is raised to gatherBytes (Linux), so
// that arriving frames wake neither its reader nor the runtime's poller;
// a plain sleep still had every frame wake the poller. The leg leads
// again, and reads at once, from its first frame that is not a copy:
// when the leading leg slows or falls silent.
//
// The wait sits under the client, in the socket its dialer hands it
// (client.WithDialer): the client reads through it, unaware.

const (
	// trailWait is how long a trailing leg waits before reading its
	// drained socket again: the merged stream's latency is the leading
	// leg's, and a leading leg that falls silent is covered by a trailing
	// one at most this much later than at once.
	trailWait = time.Millisecond
	// gatherBytes is a trailing leg's socket's low-water mark while it
	// waits: half the client's read buffer (64 KiB), so that a socket that
	// gathers that much wakes its reader early, and is read in one call.
	gatherBytes = 32 << 10
)

// trailDialer is dialer with each socket it opens read as leg's: paused
// while the leg trails.
func (c *copies) trailDialer(leg int, dialer websocket.Dialer) *websocket.Dialer {
	netDial := dialer.NetDialContext
	if netDial == nil {
		netDial = (&net.Dialer{}).DialContext
	}
	dialer.NetDialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		nc, err := netDial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		tc := &trailConn{Conn: nc, pause: func() time.Duration { return c.pause(leg) }}
		if sc, ok := nc.(syscall.Conn); ok {
			tc.raw, _ = sc.SyscallConn()
		}
		return tc, nil
	}
	return &dialer
}

// dialled records leg's client, for pause.
func (c *copies) dialled(leg int, ctl client.Leg) {
	if c != nil {
		waiting := ctl.Waiting
		c.legs[leg].waiting.Store(&waiting)
	}
}

// pause is how long leg's reader waits before reading its drained socket:
// trailWait while it trails, another leg leads (two trailing legs would
// both wait, and the stream with them) and no call waits on it for its
// answer; none otherwise. Runs on leg's reader.
func (c *copies) pause(leg int) time.Duration {
	l := &c.legs[leg]
	if !l.trailing.Load() {
		return 0
	}
	if waiting := l.waiting.Load(); waiting == nil || (*waiting)() {
		return 0
	}
	for i := range c.legs {
		if i != leg && !c.legs[i].trailing.Load() {
			return trailWait
		}
	}
	return 0
}

// trailConn is a leg's socket: before a read that follows one which did
// not fill its buffer (the socket was drained), it waits as pause says,
// its low-water mark raised meanwhile.
type trailConn struct {
	net.Conn
	pause func() time.Duration
	raw   syscall.RawConn // for the low-water mark; nil: none
	// drained: the last read did not fill its buffer. Owned by the
	// goroutine reading the socket: the handshake's, then the reader.
	drained bool
}

// Read waits as pause says when the socket was drained, then reads.
func (tc *trailConn) Read(p []byte) (int, error) {
	if tc.drained {
		if d := tc.pause(); d > 0 {
			tc.lowWater(gatherBytes)
			time.Sleep(d)
			tc.lowWater(1)
		}
	}
	n, err := tc.Conn.Read(p)
	tc.drained = n < len(p)
	return n, err
}

// lowWater sets the socket's receive low-water mark to n bytes, where the
// system has one: until n bytes wait, the socket does not wake the
// runtime's poller. A read takes what waits all the same.
func (tc *trailConn) lowWater(n int) {
	if tc.raw != nil {
		_ = tc.raw.Control(func(fd uintptr) { setLowWater(fd, n) })
	}
}
