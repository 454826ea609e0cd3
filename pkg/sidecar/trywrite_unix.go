//go:build unix

package sidecar

import (
	"net"
	"syscall"
)

// rawConnOf returns the connection's file descriptor access, or nil when
// it has none (then every frame goes through the writer goroutine).
func rawConnOf(nc net.Conn) syscall.RawConn {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return nil
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	return raw
}

// tryWriteRaw writes as much of frame as the socket behind raw takes
// without waiting, with write(2) on the non-blocking descriptor, and
// returns the bytes written (0 when raw is nil). It never waits for room:
// what is left is the writer goroutine's.
func tryWriteRaw(raw syscall.RawConn, frame []byte) int {
	if raw == nil {
		return 0
	}
	n := 0
	_ = raw.Write(func(fd uintptr) bool {
		for n < len(frame) {
			m, err := syscall.Write(int(fd), frame[n:])
			if err == syscall.EINTR {
				continue
			}
			if err != nil || m <= 0 {
				break
			}
			n += m
		}
		return true // done: a full socket is left to the writer
	})
	return n
}
