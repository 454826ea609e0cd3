//go:build !unix

package sidecar

import "net"

// rawWriter writes nothing without write(2): the writer goroutine
// writes every frame.
type rawWriter struct{}

func (*rawWriter) init(net.Conn) {}

// tryWrite writes nothing.
func (*rawWriter) tryWrite([]byte) int { return 0 }
