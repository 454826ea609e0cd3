package client_test

import (
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/pkg/client"
)

// Helpers shared by the fault tests (reconnect, liveness, auth, gap,
// metrics, faults).

// fastBackoff reconnects within a few milliseconds, with ±50% jitter, so
// fault tests stay fast while still exercising the jittered path.
func fastBackoff() client.Option {
	return client.WithBackoff(func() backoff.BackOff {
		b := backoff.NewExponentialBackOff()
		b.InitialInterval = 5 * time.Millisecond
		b.RandomizationFactor = 0.5
		b.Multiplier = 2
		b.MaxInterval = 20 * time.Millisecond
		b.MaxElapsedTime = 0
		b.Reset()
		return b
	})
}

// constantBackoff waits d before every attempt.
func constantBackoff(d time.Duration) client.Option {
	return client.WithBackoff(func() backoff.BackOff { return backoff.NewConstantBackOff(d) })
}

// drainEvents discards every queued event.
func drainEvents(c *client.Client) {
	for {
		select {
		case _, ok := <-c.Events():
			if !ok {
				return
			}
		default:
			return
		}
	}
}

// eventsUntil collects events up to and including the first of kind.
func eventsUntil(t *testing.T, c *client.Client, kind client.EventKind) []client.Event {
	t.Helper()
	var evs []client.Event
	timeout := time.After(10 * time.Second)
	for {
		select {
		case ev, ok := <-c.Events():
			require.True(t, ok, "events channel closed while waiting for %v (got %v)", kind, kindsOf(evs))
			evs = append(evs, ev)
			if ev.Kind == kind {
				return evs
			}
		case <-timeout:
			t.Fatalf("no %v event within 10s (got %v)", kind, kindsOf(evs))
		}
	}
}

// kindsOf lists the kinds of evs, with consecutive Reconnecting events
// folded into one, so an outage reads Disconnected, Reconnecting,
// Connected, Resubscribed however many dials it took.
func kindsOf(evs []client.Event) []client.EventKind {
	var ks []client.EventKind
	for _, ev := range evs {
		if n := len(ks); n > 0 && ks[n-1] == client.Reconnecting && ev.Kind == client.Reconnecting {
			continue
		}
		ks = append(ks, ev.Kind)
	}
	return ks
}

// requireNoEvent fails if an event of kind is queued or arrives within d.
// It is the one bounded wait a negative assertion needs.
func requireNoEvent(t *testing.T, c *client.Client, kind client.EventKind, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	check := func(ev client.Event, ok bool) bool {
		require.False(t, ok && ev.Kind == kind, "unexpected event %v", ev)
		return ok
	}
	for {
		select { // whatever is queued first
		case ev, ok := <-c.Events():
			if !check(ev, ok) {
				return
			}
			continue
		default:
		}
		wait := time.Until(deadline)
		if wait <= 0 {
			return
		}
		select {
		case ev, ok := <-c.Events():
			if !check(ev, ok) {
				return
			}
		case <-time.After(wait):
			return
		}
	}
}

// requireOpen fails if sub has ended.
func requireOpen(t *testing.T, sub *client.Subscription) {
	t.Helper()
	select {
	case err, ok := <-sub.Err():
		t.Fatalf("subscription ended (err %v, open %v)", err, ok)
	default:
	}
}

// holdListener listens on addr (127.0.0.1:0 for any port) and accepts
// TCP connections without ever answering: a server that never upgrades.
// It returns the address and a channel that receives once per accepted
// connection, when the client's upgrade request has arrived. Everything is closed with the test.
func holdListener(t *testing.T, addr string) (string, <-chan struct{}) {
	t.Helper()
	var ln net.Listener
	var err error
	// A restarted port may still be held for a moment by the old socket.
	require.Eventually(t, func() bool {
		ln, err = net.Listen("tcp", addr)
		return err == nil
	}, 5*time.Second, 10*time.Millisecond, "listen on %s: %v", addr, err)

	accepted := make(chan struct{}, 100)
	var mu sync.Mutex
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, nc)
			mu.Unlock()
			// Signal once the client has sent its upgrade request: it is
			// now waiting for an answer that never comes.
			_ = nc.SetReadDeadline(time.Now().Add(5 * time.Second))
			if _, err := nc.Read(make([]byte, 1)); err != nil {
				continue
			}
			select {
			case accepted <- struct{}{}:
			default:
			}
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		<-done
		mu.Lock()
		defer mu.Unlock()
		for _, nc := range conns {
			_ = nc.Close()
		}
	})
	return ln.Addr().String(), accepted
}

// metric returns the value of the wsfan_client_* metric name whose labels
// include want, read back from reg. A histogram yields its sample count.
func metric(t *testing.T, reg prometheus.Gatherer, name string, want map[string]string) float64 {
	t.Helper()
	v, err := findMetric(reg, name, want)
	require.NoError(t, err)
	return v
}

var errNoMetric = errors.New("no such metric")

func findMetric(reg prometheus.Gatherer, name string, want map[string]string) (float64, error) {
	families, err := reg.Gather()
	if err != nil {
		return 0, err
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	next:
		for _, m := range f.GetMetric() {
			have := map[string]string{}
			for _, l := range m.GetLabel() {
				have[l.GetName()] = l.GetValue()
			}
			for k, v := range want {
				if have[k] != v {
					continue next
				}
			}
			return metricValue(f.GetType(), m), nil
		}
	}
	return 0, errNoMetric
}

func metricValue(typ dto.MetricType, m *dto.Metric) float64 {
	switch typ {
	case dto.MetricType_COUNTER:
		return m.GetCounter().GetValue()
	case dto.MetricType_GAUGE:
		return m.GetGauge().GetValue()
	case dto.MetricType_HISTOGRAM:
		return float64(m.GetHistogram().GetSampleCount())
	}
	return m.GetUntyped().GetValue()
}

// dropped reads wsfan_client_dropped_total for reason.
func dropped(t *testing.T, reg prometheus.Gatherer, reason string) float64 {
	t.Helper()
	return metric(t, reg, "wsfan_client_dropped_total", map[string]string{"reason": reason})
}

// subscribeMethod is what CountReceived counts for a dialect's subscribe
// frames.
func subscribeMethod(dialect string) string {
	switch dialect {
	case "ethereum":
		return "eth_subscribe"
	case "ethereal":
		return "subscribe"
	}
	return "public/subscribe"
}

// contains reports whether frame contains s.
func contains(frame []byte, s string) bool { return strings.Contains(string(frame), s) }
