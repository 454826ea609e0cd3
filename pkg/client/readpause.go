package client

import "time"

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

// pauseBeforeRead waits as the pause says, unless a call waits for an
// answer, with the socket's low-water mark raised meanwhile. Runs on the
// goroutine reading the socket.
func (s *socket) pauseBeforeRead() {
	if s.c.pendingCalls() != 0 {
		return
	}
	if d := s.pause(); d > 0 {
		s.lowWater(gatherBytes)
		time.Sleep(d)
		s.lowWater(1)
	}
}

// lowWater sets the socket's receive low-water mark to n bytes, where the
// system has one: until n bytes wait, the socket does not wake the
// runtime's poller. A read takes what waits all the same.
func (s *socket) lowWater(n int) {
	if s.raw != nil {
		_ = s.raw.Control(func(fd uintptr) { setLowWater(fd, n) })
	}
}
