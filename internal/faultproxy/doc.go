// Package faultproxy runs a real Toxiproxy (github.com/Shopify/toxiproxy/v2)
// proxy inside the test process, on 127.0.0.1 only, between a client and a
// server, so that tests can inject network faults: a black hole, reset
// connections, a proxy that is down, latency, a bandwidth cap, sliced
// writes and a byte limit.
//
// A test starts one Proxy per upstream, dials Proxy.Addr (or Proxy.URL)
// instead of the upstream, and calls the fault methods while traffic flows.
// The proxy stops itself when the test ends, and the test's cleanup waits
// until every goroutine Toxiproxy started for that proxy has ended, so that
// packages checking for leaks with go.uber.org/goleak stay clean.
//
// Toxiproxy's logging is silenced (including zerolog's global logger, which
// its bandwidth toxic writes to) and its metrics go to a private Prometheus
// registry, never to the default one.
//
// Toxiproxy v2.5.0 leaks a connection's goroutines when its write to one
// side fails while more data is queued behind it. Down and the cleanup
// drain every connection before closing it, which avoids that, but it can
// still happen when a client closes abruptly, or data follows a LimitData
// or ResetPeer cut-off, while the other side keeps writing; and adding a
// toxic, Down included, waits until a client that has stopped reading a
// stream reads again. The cleanup then fails the test, listing the
// goroutines, rather than leave them to goleak. A toxic that holds data
// back (latency, bandwidth, slicer) is removed when the test ends, before
// the clients dialled before it was set close: changing toxics once such
// a toxic holds data for a closed client deadlocks Toxiproxy.
package faultproxy
