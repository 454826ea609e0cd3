package faultproxy_test

import (
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/faultproxy"
)

func TestDownClosesConnectionsAndRefusesNew(t *testing.T) {
	p := faultproxy.Start(t, startEcho(t))
	c := dial(t, p.Addr())
	roundTrip(t, c, "ping")

	p.Down()

	n, err := c.Read(make([]byte, 16))
	require.Zero(t, n)
	require.True(t, isClosed(err), "read: %v; want EOF", err)
	_, err = net.DialTimeout("tcp", p.Addr(), timeout)
	require.Error(t, err)
}

func TestHealRestoresService(t *testing.T) {
	for name, fault := range map[string]func(*faultproxy.Proxy){
		"Down":      (*faultproxy.Proxy).Down,
		"Blackhole": (*faultproxy.Proxy).Blackhole,
		"ResetPeer": (*faultproxy.Proxy).ResetPeer,
		"LimitData": func(p *faultproxy.Proxy) { p.LimitData(0) },
		"Latency":   func(p *faultproxy.Proxy) { p.Latency(time.Hour) },
		"Everything": func(p *faultproxy.Proxy) {
			p.Latency(time.Hour)
			p.Bandwidth(1)
			p.Slicer(1, 1000)
			p.Blackhole()
			p.Down()
		},
	} {
		t.Run(name, func(t *testing.T) {
			p := faultproxy.Start(t, startEcho(t))
			addr := p.Addr()
			fault(p)

			p.Heal()
			p.Heal() // idempotent

			require.Equal(t, addr, p.Addr())
			c := dial(t, p.Addr())
			roundTrip(t, c, "ping")
		})
	}
}

func TestHealClosesBlackholedConnections(t *testing.T) {
	p := faultproxy.Start(t, startEcho(t))
	c := dial(t, p.Addr())
	roundTrip(t, c, "ping")
	p.Blackhole()

	p.Heal()

	_, err := io.ReadFull(c, make([]byte, 1))
	require.True(t, isClosed(err), "read: %v; want EOF", err)
}

// startStreamer starts a TCP server on 127.0.0.1 that writes 1 KiB blocks
// to the first connection it accepts until a write fails, and returns its
// address and a channel closed when it has stopped.
func startStreamer(t *testing.T) (string, <-chan struct{}) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	done := make(chan struct{})
	go func() {
		defer close(done)
		s, err := ln.Accept()
		if err != nil {
			return
		}
		defer s.Close()
		_ = s.SetWriteDeadline(time.Now().Add(timeout))
		block := make([]byte, 1024)
		for {
			if _, err := s.Write(block); err != nil {
				return
			}
		}
	}()
	return ln.Addr().String(), done
}

// Down while data flows: the proxy's cleanup would fail the test if
// Toxiproxy left goroutines behind.
func TestDownWhileStreaming(t *testing.T) {
	upstream, streamed := startStreamer(t)
	p := faultproxy.Start(t, upstream)
	c := dial(t, p.Addr())
	_, err := io.ReadFull(c, make([]byte, 64*1024))
	require.NoError(t, err)
	read := make(chan error, 1)
	go func() {
		_, err := io.Copy(io.Discard, c)
		read <- err
	}()

	p.Down()

	require.NoError(t, <-read) // EOF, within the connection's deadline
	<-streamed
}

// A toxic that holds data back is gone before the cleanups registered
// before it was set run, so a client closing in its cleanup finds the
// connection flowing again (see holdsData for the deadlock this avoids);
// so too a client dialled between a Heal and the toxic set again. Each
// delay is far longer than the connections' deadline (timeout): 16 KiB
// at 1 KB/s, or in 1-byte slices a second apart.
func TestDelayingToxicsAreRemovedBeforeEarlierCleanups(t *testing.T) {
	msg := strings.Repeat("undelayed at the end ", 800)
	for name, fault := range map[string]func(*faultproxy.Proxy){
		"Latency":   func(p *faultproxy.Proxy) { p.Latency(time.Hour) },
		"Jitter":    func(p *faultproxy.Proxy) { p.Jitter(time.Hour, time.Minute) },
		"Bandwidth": func(p *faultproxy.Proxy) { p.Bandwidth(1) },
		"Slicer":    func(p *faultproxy.Proxy) { p.Slicer(1, 1_000_000) },
	} {
		t.Run(name, func(t *testing.T) {
			p := faultproxy.Start(t, startEcho(t))
			first := dial(t, p.Addr())
			t.Cleanup(func() { roundTrip(t, first, msg) })
			fault(p)
			p.Heal()
			second := dial(t, p.Addr())
			t.Cleanup(func() { roundTrip(t, second, msg) })
			fault(p)
		})
	}
}
