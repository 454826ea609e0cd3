package client

import (
	"net"
	"time"

	"github.com/wsfan/wsfan/internal/batchconn"
)

// socket is a connection's TCP socket as gorilla reads it and the writer
// writes it: writes gathered into one write(2) (the embedded
// batchconn.Conn: Cork, Flush), and each read that returns bytes stamped
// with the wall clock.
//
// A frame's receive time (Message.RecvTime) is the stamp of the read
// that completed it, not the moment the reader got round to it: a read
// takes up to 64 KiB, a hundred frames or more, which the reader then
// classifies and delivers one after another (and under Block waits for
// a consumer between them), and stamping each as it came to it would add
// that work to every later frame's measured delay. Each frame after the
// first that one read completed is stamped a nanosecond after the one
// before it, so that no two frames of a connection share a stamp: a
// recording ties what a program was told to its frame by it (pkg/record,
// cmd/replay).
type socket struct {
	*batchconn.Conn
	// readAt is when the last read returned bytes, stamped is how many
	// frames were stamped since (frameTime). Owned by the goroutine
	// reading the socket: the handshake's, then the reader.
	readAt  time.Time
	stamped int
}

// newSocket wraps tcp for a connection.
func newSocket(tcp net.Conn) *socket { return &socket{Conn: batchconn.New(tcp)} }

// Read reads, and stamps a read that returned bytes.
func (s *socket) Read(p []byte) (int, error) {
	n, err := s.Conn.Read(p)
	if n > 0 {
		s.readAt, s.stamped = time.Now(), 0
	}
	return n, err
}

// frameTime is the receive time of the frame just read: the last read's
// stamp, a nanosecond later for each frame stamped since. Runs on the
// reader.
func (s *socket) frameTime() time.Time {
	t := s.readAt.Add(time.Duration(s.stamped))
	s.stamped++
	return t
}
