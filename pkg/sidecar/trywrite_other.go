//go:build !unix

package sidecar

import (
	"net"
	"syscall"
)

// rawConnOf returns nil: without write(2) every frame goes through the
// writer goroutine.
func rawConnOf(net.Conn) syscall.RawConn { return nil }

// tryWriteRaw writes nothing; the writer goroutine writes every frame.
func tryWriteRaw(syscall.RawConn, []byte) int { return 0 }
