package faultproxy_test

import (
	"bytes"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/faultproxy"
)

// requireTimeout reads from c with a 300ms deadline and requires the read
// to time out: nothing arrived, yet the connection is still open.
func requireTimeout(t *testing.T, c net.Conn) {
	t.Helper()
	require.NoError(t, c.SetReadDeadline(time.Now().Add(300*time.Millisecond)))
	n, err := c.Read(make([]byte, 16))
	var ne net.Error
	require.True(t, errors.As(err, &ne) && ne.Timeout(), "read %d bytes, err %v; want a timeout", n, err)
	require.NoError(t, c.SetReadDeadline(time.Now().Add(timeout)))
}

func TestBlackholeDropsDataAndKeepsConnectionsOpen(t *testing.T) {
	p := faultproxy.Start(t, startEcho(t))
	before := dial(t, p.Addr())
	roundTrip(t, before, "ping")

	p.Blackhole()

	for _, c := range []net.Conn{before, dial(t, p.Addr())} {
		_, err := c.Write([]byte("lost"))
		require.NoError(t, err)
		requireTimeout(t, c)
		// Still open: a write succeeds and the read times out again
		// rather than reporting EOF or a reset.
		_, err = c.Write([]byte("lost again"))
		require.NoError(t, err)
		requireTimeout(t, c)
	}
}

func TestResetPeerResetsNewConnections(t *testing.T) {
	p := faultproxy.Start(t, startEcho(t))
	p.ResetPeer()

	c := dial(t, p.Addr())
	_, err := c.Write([]byte("ping"))
	require.NoError(t, err)
	_, err = io.ReadFull(c, make([]byte, 4))
	require.Error(t, err)
	require.True(t, isReset(err), "read: %v; want a connection reset", err)
}

func TestResetPeerClosesOpenConnections(t *testing.T) {
	p := faultproxy.Start(t, startEcho(t))
	c := dial(t, p.Addr())
	roundTrip(t, c, "ping")

	p.ResetPeer()

	_, err := c.Write([]byte("ping"))
	require.NoError(t, err)
	_, err = io.ReadFull(c, make([]byte, 4))
	require.Error(t, err)
	require.True(t, isClosed(err), "read: %v; want EOF or a reset", err)
}

func TestLimitDataClosesAfterBytes(t *testing.T) {
	const limit = 10
	p := faultproxy.Start(t, startEcho(t))
	p.LimitData(limit)

	c := dial(t, p.Addr())
	msg := strings.Repeat("x", limit)
	roundTrip(t, c, msg)
	n, err := c.Read(make([]byte, 16))
	require.Zero(t, n)
	require.True(t, isClosed(err), "read: %v; want EOF", err)
}

func TestLatencyDelaysRoundTrip(t *testing.T) {
	const latency = 150 * time.Millisecond
	p := faultproxy.Start(t, startEcho(t))
	c := dial(t, p.Addr())
	roundTrip(t, c, "warm")

	p.Latency(latency)

	start := time.Now()
	roundTrip(t, c, "ping")
	require.GreaterOrEqual(t, time.Since(start), latency)

	p.Latency(2 * latency) // replaces the first
	start = time.Now()
	roundTrip(t, c, "pong")
	require.GreaterOrEqual(t, time.Since(start), 2*latency)
}

func TestBandwidthCapsThroughput(t *testing.T) {
	p := faultproxy.Start(t, startEcho(t))
	p.Bandwidth(10) // 10 KB/s: 5000 bytes take 500ms

	c := dial(t, p.Addr())
	msg := bytes.Repeat([]byte("0123456789"), 500)
	start := time.Now()
	roundTrip(t, c, string(msg))
	require.GreaterOrEqual(t, time.Since(start), 400*time.Millisecond)
}

func TestSlicerSlicesAndDelays(t *testing.T) {
	p := faultproxy.Start(t, startEcho(t))
	// 100 bytes in slices of at most 10 bytes: 10 or more slices, each
	// followed by a 10ms pause.
	p.Slicer(10, 10_000)

	c := dial(t, p.Addr())
	msg := strings.Repeat("abcdefghij", 10)
	start := time.Now()
	roundTrip(t, c, msg)
	require.GreaterOrEqual(t, time.Since(start), 90*time.Millisecond)
}
