package faultproxy

import (
	"context"
	"errors"
	"net"
	"net/url"
	"sync"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
)

// stopTimeout bounds how long the test's cleanup waits for Toxiproxy's
// goroutines to end once the proxy has stopped.
const stopTimeout = 10 * time.Second

// Proxy is one Toxiproxy proxy listening on 127.0.0.1 at a random port and
// forwarding every connection it accepts to an upstream address. Its
// methods take effect one at a time and, like testing.TB.Fatal, must be
// called from the goroutine running the test.
type Proxy struct {
	t     testing.TB
	tp    *toxiproxy.Proxy
	addr  string
	owner *owner

	mu sync.Mutex // serialises the fault methods
}

// Start starts a proxy on 127.0.0.1 at a random port that forwards to
// upstream, a loopback "host:port" such as "127.0.0.1:8080". It fails the
// test if upstream is not on the loopback interface or the proxy cannot
// listen. The proxy stops when the test ends: its cleanup closes every
// connection and waits until Toxiproxy's goroutines have ended.
func Start(t testing.TB, upstream string) *Proxy {
	t.Helper()
	if err := checkLoopback(upstream); err != nil {
		t.Fatalf("faultproxy: upstream %q: %v", upstream, err)
	}
	// A private registry: toxiproxy registers nothing unless metrics are
	// enabled, and never on prometheus.DefaultRegisterer.
	metrics := toxiproxy.NewMetricsContainer(prometheus.NewRegistry())
	server := toxiproxy.NewServer(metrics, zerolog.Nop())
	p := &Proxy{
		t:     t,
		tp:    toxiproxy.NewProxy(server, "faultproxy", "127.0.0.1:0", upstream),
		owner: newOwner(),
	}
	var err error
	p.owner.do(func(context.Context) { err = p.tp.Start() })
	if err != nil {
		t.Fatalf("faultproxy: start proxy to %s: %v", upstream, err)
	}
	// Start returns once the listener is bound, and Listen then holds the
	// address actually bound; later restarts (Heal) rebind that address.
	p.addr = p.tp.Listen
	t.Cleanup(p.stop)
	return p
}

// Addr returns the "127.0.0.1:port" address to dial instead of the
// upstream. It stays the same across Down and Heal.
func (p *Proxy) Addr() string { return p.addr }

// URL returns u, a URL such as "ws://127.0.0.1:8080/path?q=1", with its host
// and port replaced by Addr. It fails the test if u does not parse.
func (p *Proxy) URL(u string) string {
	p.t.Helper()
	parsed, err := url.Parse(u)
	if err != nil {
		p.t.Fatalf("faultproxy: URL %q: %v", u, err)
	}
	parsed.Host = p.addr
	return parsed.String()
}

// stop disables the proxy, closing its listener and every connection, then
// waits for Toxiproxy's goroutines. It runs as the test's cleanup.
func (p *Proxy) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.disable(); err != nil {
		p.t.Errorf("faultproxy: %v", err)
	}
	if err := p.owner.wait(stopTimeout); err != nil {
		p.t.Errorf("faultproxy: %v", err)
	}
}

// checkLoopback reports an error unless addr is "host:port" with a host
// that is a loopback IP address or "localhost".
func checkLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return errors.New("not a loopback address")
}
