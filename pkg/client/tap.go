package client

import (
	"sync/atomic"
	"time"
)

// FrameTap sees every text frame a Client's connections read and write,
// verbatim: the reader goroutine calls FrameRead with each frame before
// it is classified, the writer goroutine FrameWritten with each frame it
// wrote. Both run on the connection's hot path: they must not block and
// must copy what they keep (the bytes are the client's). A recorder
// (pkg/record) is one; it classifies what it keeps on a goroutine of its
// own.
type FrameTap interface {
	FrameRead(conn ConnInfo, frame []byte, at time.Time)
	FrameWritten(conn ConnInfo, frame []byte, at time.Time)
}

// ConnInfo names the connection a tapped frame went over.
type ConnInfo struct {
	// Client numbers the Client in its process, from 1: the legs of a
	// Pool or Standby are Clients of their own.
	Client uint64
	// Conn numbers the Client's connections, from 1: a reconnect is the
	// next number.
	Conn uint64
	// Endpoint is the index of the connection's endpoint in the Client's
	// list (WithEndpoints).
	Endpoint int
}

// WithFrameTap has t see every frame the client's connections read and
// write (FrameTap). Default: none.
func WithFrameTap(t FrameTap) Option { return clientOption(func(c *config) { c.tap = t }) }

// clientSeq numbers the Clients of the process (ConnInfo.Client).
var clientSeq atomic.Uint64
