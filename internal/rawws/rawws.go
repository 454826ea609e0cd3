// Package rawws opens WebSocket connections by hand for memory
// benchmarks: a client that costs the measuring process nothing but its
// socket (no reader goroutine, no buffers), so what is measured is the
// server's.
package rawws

import (
	"bufio"
	"fmt"
	"net"
)

// Dial opens a WebSocket to addr's path, completes the handshake and
// sends frames as (zero-masked) text frames; whatever the server answers
// is left unread in the kernel. Frames must be shorter than 64 KiB.
func Dial(addr, path string, frames ...[]byte) (net.Conn, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	_, err = fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n", path, addr)
	if err != nil {
		_ = c.Close()
		return nil, err
	}
	br := bufio.NewReaderSize(c, 256)
	status := ""
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			_ = c.Close()
			return nil, fmt.Errorf("rawws: handshake: %w", err)
		}
		if status == "" {
			status = line
		}
		if line == "\r\n" {
			break
		}
	}
	if len(status) < 12 || status[9:12] != "101" {
		_ = c.Close()
		return nil, fmt.Errorf("rawws: handshake refused: %q", status)
	}
	for _, f := range frames {
		if len(f) >= 1<<16 {
			_ = c.Close()
			return nil, fmt.Errorf("rawws: a frame of %d bytes", len(f))
		}
		head := []byte{0x81, 0x80 | 126, byte(len(f) >> 8), byte(len(f)), 0, 0, 0, 0}
		if _, err := c.Write(append(head, f...)); err != nil {
			_ = c.Close()
			return nil, err
		}
	}
	return c, nil
}
