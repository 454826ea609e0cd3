package faultproxy

import (
	"context"
	"errors"
	"fmt"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
)

// Down disables the proxy: it stops listening, so new connections are
// refused, and closes every open connection, on both sides, before it
// returns (their peers read EOF). Heal brings it back on the same address.
// If a client has stopped reading while the upstream writes to it, Down
// waits 5s for it, then closes the connections anyway and reports an error.
func (p *Proxy) Down() {
	p.t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.disable(); err != nil {
		p.t.Errorf("faultproxy: %v", err)
	}
}

// Heal removes every toxic and re-enables the proxy if it is down. Removing
// a Blackhole closes the connections it held; connections that other toxics
// did not close carry on unharmed.
func (p *Proxy) Heal() {
	p.t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	var err error
	p.owner.do(func(ctx context.Context) {
		p.tp.Toxics.ResetToxics(ctx)
		err = p.tp.Start()
	})
	if err != nil && !errors.Is(err, toxiproxy.ErrProxyAlreadyStarted) {
		p.t.Fatalf("faultproxy: restart proxy on %s: %v", p.addr, err)
	}
}

// drainTimeout bounds how long disable waits for Toxiproxy to accept the
// toxic that drains its pipelines.
const drainTimeout = 5 * time.Second

// disable stops the proxy, closing its listener and connections, for a
// caller holding p.mu.
//
// Toxiproxy v2.5.0 stops a connection's pipeline when writing to a closed
// socket fails, and the data still queued behind that write then blocks
// its goroutines forever. Stopping the proxy while data flows would so leak
// goroutines; to avoid it, a "timeout" toxic that drops everything is first
// appended to every pipeline, so nothing is queued for the writes when the
// sockets close (without it, stopping while a client read a stream leaked
// goroutines in about half the runs; with it, in none). Adding a toxic
// waits for every pipeline to accept it, which never happens while a client
// has stopped reading a stream the upstream keeps writing, so the wait is
// bounded by drainTimeout and the error says so.
func (p *Proxy) disable() error {
	done := make(chan error, 1)
	go func() {
		done <- p.bothLocked(drainName, "timeout", map[string]any{"timeout": 0})
	}()
	var err error
	select {
	case err = <-done:
	case <-time.After(drainTimeout):
		err = fmt.Errorf("draining connections: adding a toxic still blocks after %v"+
			" (a client stopped reading while the upstream kept writing?)", drainTimeout)
	}
	p.tp.Stop()
	return err
}
