package faultproxy_test

import (
	"errors"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// timeout bounds every network wait of these tests.
const timeout = 10 * time.Second

// startEcho starts a TCP server on 127.0.0.1 that writes back everything it
// reads, and returns its address. It stops, and its goroutines end, when
// the test ends.
func startEcho(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		conns []net.Conn
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				_, _ = io.Copy(c, c)
			}()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		for _, c := range conns {
			_ = c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return ln.Addr().String()
}

// dial connects to addr with every later read and write bounded by
// timeout, and closes the connection when the test ends.
func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, timeout)
	require.NoError(t, err)
	require.NoError(t, c.SetDeadline(time.Now().Add(timeout)))
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// roundTrip writes msg to c and reads it back.
func roundTrip(t *testing.T, c net.Conn, msg string) {
	t.Helper()
	_, err := c.Write([]byte(msg))
	require.NoError(t, err)
	got := make([]byte, len(msg))
	_, err = io.ReadFull(c, got)
	require.NoError(t, err)
	require.Equal(t, msg, string(got))
}

// isClosed reports whether err is what reading or writing a connection the
// peer closed or reset returns.
func isClosed(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		isReset(err) || errors.Is(err, net.ErrClosed)
}
