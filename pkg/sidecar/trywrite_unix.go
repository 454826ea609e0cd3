//go:build unix

package sidecar

import (
	"net"
	"syscall"
)

// rawWriter writes to a connection's descriptor with write(2) as much
// as the socket takes without waiting (tryWrite); what is left is the
// writer goroutine's. The session calls tryWrite without its lock, only
// while its writer is stopped, so one call at a time: frame and n are
// that call's.
type rawWriter struct {
	raw syscall.RawConn // nil without one: then every frame goes through the writer goroutine
	// write is writeFD as a value, made once: raw.Write keeps the
	// function it is given, so a closure made per call was an allocation
	// a client a message, half of the sidecar's garbage at 100 clients
	// (BenchmarkHopPeers).
	write func(fd uintptr) bool
	frame []byte // the frame being written, during a call
	n     int    // how much of it is written, during a call
}

// init makes w write to nc's descriptor, if it has one.
func (w *rawWriter) init(nc net.Conn) {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return
	}
	w.raw, w.write = raw, w.writeFD
}

// tryWrite writes as much of frame as the socket takes without waiting,
// and returns the bytes written (0 without a descriptor).
func (w *rawWriter) tryWrite(frame []byte) int {
	if w.raw == nil {
		return 0
	}
	w.frame, w.n = frame, 0
	_ = w.raw.Write(w.write)
	n := w.n
	w.frame = nil // not kept past the call
	return n
}

// writeFD writes w.frame on the non-blocking descriptor fd until it is
// written or the socket is full; raw.Write calls it.
func (w *rawWriter) writeFD(fd uintptr) bool {
	for w.n < len(w.frame) {
		m, err := syscall.Write(int(fd), w.frame[w.n:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil || m <= 0 {
			break
		}
		w.n += m
	}
	return true // done: a full socket is left to the writer
}
