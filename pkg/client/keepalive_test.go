package client_test

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/protocol/protocoltest"
)

// A venue whose keepalive is a text "ping" answered "pong" (OKX, Bybit)
// fits through protocol.Venue.Keepalive alone: the client sends it, so the
// server, which closes a silent client, keeps the connection; the bare
// "pong" answers are taken for what they are, not dropped as malformed;
// and a client that sends none is closed by the server for its silence.
func TestApplicationKeepalive(t *testing.T) {
	protocoltest.RegisterPingDialect()
	srv := newServer(t, exchangetest.Dialect(protocoltest.PingDialect))
	proto, err := protocol.ByName(protocoltest.PingDialect)
	require.NoError(t, err)
	reg := prometheus.NewRegistry()
	c := dial(t, srv, proto, client.WithPing(0, 0), client.WithMetrics(reg, "ping"))
	ctx := testutil.Context(t)
	sub, err := c.Subscribe(ctx, []string{"ticker.A.raw"})
	require.NoError(t, err)

	requireNoEvent(t, c, client.Disconnected, 3*protocoltest.PingIdleLimit)
	pings := 0
	for _, r := range srv.Received() {
		if string(r.Data) == "ping" {
			pings++
		}
	}
	assert.GreaterOrEqual(t, pings, 5, "a ping every %v", protocoltest.PingEvery)
	srv.Publish("ticker.A.raw", []byte(`{"n":1}`))
	assert.Equal(t, "ticker.A.raw", receive(t, sub).Topic)
	assert.Zero(t, counterValue(t, reg, "wsfan_client_dropped_total", "malformed"), "no pong dropped as malformed")

	// Without the keepalive, the same server closes the silent client.
	plain, err := protocol.ByName("thalex")
	require.NoError(t, err)
	silent := dial(t, srv, plain, client.WithPing(0, 0))
	start := time.Now()
	ev := waitEvent(t, silent, client.Disconnected)
	assert.GreaterOrEqual(t, time.Since(start), protocoltest.PingIdleLimit/2)
	assert.Error(t, ev.Err)
}

// counterValue is the value of counter name with label reason in reg.
func counterValue(t *testing.T, reg prometheus.Gatherer, name, reason string) float64 {
	t.Helper()
	families, err := reg.Gather()
	require.NoError(t, err)
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "reason" && l.GetValue() == reason {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}
