// Package sidecartest serves a sidecar on a loopback port for the tests
// of every module that needs one running (pkg/sidecar's own, natstest,
// browsertest, examples).
package sidecartest

import (
	"context"
	"errors"
	"net"
	"sync"
	"testing"

	"github.com/wsfan/wsfan/pkg/sidecar"
)

// Served is a sidecar serving on a loopback port.
type Served struct {
	*sidecar.Server
	// Addr is the host:port it listens on.
	Addr string

	stopOnce sync.Once
	stop     func()
}

// Serve builds a sidecar from cfg and serves it on a free loopback port
// until Stop or the end of the test. It does not wait for the upstream.
func Serve(t testing.TB, cfg sidecar.Config) *Served {
	t.Helper()
	srv, err := sidecar.New(cfg)
	if err != nil {
		t.Fatalf("sidecar.New: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	s := &Served{Server: srv, Addr: ln.Addr().String()}
	s.stop = func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Serve: %v", err)
		}
	}
	t.Cleanup(s.Stop)
	return s
}

// Stop stops serving (draining local clients) and waits; it is safe to
// call more than once.
func (s *Served) Stop() { s.stopOnce.Do(s.stop) }
