package client_test

import (
	"encoding/json"
	"math/bits"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	promtest "github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// Every wsfan_client_* metric reads back what happened on the connection.
func TestMetricsReadBack(t *testing.T) {
	d := dialects[0]
	srv := newServer(t, d.server)
	srv.Handle("echo", func(p json.RawMessage) (any, *protocol.Error) { return p, nil })
	srv.Handle("fail", func(json.RawMessage) (any, *protocol.Error) {
		return nil, &protocol.Error{Code: 7, Message: "no"}
	})
	reg := prometheus.NewRegistry()
	c := dial(t, srv, d.proto(), fastBackoff(), client.WithMetrics(reg, "feed"), client.Buffer(4), client.Grace(0))
	ctx := testutil.Context(t)
	conn := map[string]string{"connection": "feed"}
	get := func(name string) float64 { return metric(t, reg, name, conn) }

	assert.Equal(t, float64(client.StateConnected), get("wsfan_client_state"))
	assert.Zero(t, get("wsfan_client_reconnects_total"))
	assert.Equal(t, 6, count(t, reg, "wsfan_client_dropped_total")) // one per reason, 0 included

	a, err := c.Subscribe(ctx, []string{d.topics[0], d.topics[1]})
	require.NoError(t, err)
	b, err := c.Subscribe(ctx, []string{d.topics[1], d.topics[2]})
	require.NoError(t, err)
	require.NoError(t, promtest.GatherAndCompare(reg, strings.NewReader(`
# HELP wsfan_client_subscriptions Open subscriptions.
# TYPE wsfan_client_subscriptions gauge
wsfan_client_subscriptions{connection="feed"} 2
# HELP wsfan_client_topics Distinct topics subscribed upstream.
# TYPE wsfan_client_topics gauge
wsfan_client_topics{connection="feed"} 3
`), "wsfan_client_subscriptions", "wsfan_client_topics"))

	// RPC latency: every answered call is observed; errors are counted.
	for range 5 {
		require.NoError(t, c.Call(ctx, "echo", []int{1}, nil))
	}
	require.Error(t, c.Call(ctx, "fail", nil, nil))
	assert.Equal(t, float64(6), get("wsfan_client_rpc_latency_seconds"))
	assert.Equal(t, float64(1), get("wsfan_client_rpc_errors_total"))

	// Frames, bytes, deliveries.
	frames, bytes := get("wsfan_client_frames_total"), get("wsfan_client_bytes_total")
	for i := range 3 {
		srv.Publish(d.topics[0], payload(d.name, d.topics[0], i))
	}
	for range 3 {
		receive(t, a)
	}
	assert.Equal(t, frames+3, get("wsfan_client_frames_total"))
	assert.Greater(t, get("wsfan_client_bytes_total"), bytes+3*20)
	// The reader counts a delivery after handing the message over.
	require.Eventually(t, func() bool { return get("wsfan_client_delivered_total") == 3 }, 5*time.Second, time.Millisecond,
		"delivered %v", get("wsfan_client_delivered_total"))

	// Overflow: b's buffer holds 4; DropOldest drops the rest.
	for i := range 10 {
		srv.Publish(d.topics[2], payload(d.name, d.topics[2], i))
	}
	require.Eventually(t, func() bool { return get("wsfan_client_frames_total") == frames+13 }, 5*time.Second, time.Millisecond)
	// A frame is counted when read, its drop once routed: wait for the last.
	require.Eventually(t, func() bool { return dropped(t, reg, "overflow") == 6 }, 5*time.Second, time.Millisecond,
		"dropped %v", dropped(t, reg, "overflow"))
	assert.Equal(t, uint64(6), b.Dropped())

	// Pending calls.
	srv.SetResponseDelay(time.Hour)
	errc := make(chan error, 1)
	go func() { errc <- c.Call(ctx, "echo", nil, nil) }()
	require.Eventually(t, func() bool { return get("wsfan_client_pending_calls") == 1 }, 5*time.Second, time.Millisecond)

	// A reconnect: counted, and the state gauge follows.
	require.NoError(t, srv.WaitConnections(ctx, 1))
	srv.DropConnections()
	require.ErrorIs(t, <-errc, client.ErrConnectionLost)
	srv.SetResponseDelay(0)
	waitEvent(t, c, client.Resubscribed)
	assert.Equal(t, float64(1), get("wsfan_client_reconnects_total"))
	assert.Equal(t, float64(client.StateConnected), get("wsfan_client_state"))
	assert.Zero(t, get("wsfan_client_pending_calls"))
	assert.Equal(t, float64(2), get("wsfan_client_subscriptions"), "subscriptions survive the reconnect")

	// Close unregisters everything, so the name can be used again.
	require.NoError(t, c.Close())
	assert.Zero(t, count(t, reg, "wsfan_client_state"))
	dial(t, srv, d.proto(), client.WithMetrics(reg, "feed"))
}

// The state gauge reads "reconnecting" while the server is down.
func TestMetricsStateWhileReconnecting(t *testing.T) {
	srv := newServer(t, thalex.Name)
	reg := prometheus.NewRegistry()
	c := dial(t, srv, dialects[0].proto(), constantBackoff(time.Hour), client.WithMetrics(reg, "x"))
	srv.Stop()
	waitEvent(t, c, client.Reconnecting)
	assert.Equal(t, float64(client.StateReconnecting), metric(t, reg, "wsfan_client_state", nil))
	assert.Equal(t, float64(1), metric(t, reg, "wsfan_client_reconnects_total", nil))
}

// Two clients share a registry under different names; a name taken twice
// fails Dial instead of mixing counters.
func TestMetricsNamesPerConnection(t *testing.T) {
	srv := newServer(t, thalex.Name)
	reg := prometheus.NewRegistry()
	dial(t, srv, dialects[0].proto(), client.WithMetrics(reg, "a"))
	dial(t, srv, dialects[0].proto(), client.WithMetrics(reg, "b"))
	assert.Equal(t, 2, count(t, reg, "wsfan_client_state"))

	c, err := client.Dial(testutil.Context(t), srv.URL(), client.WithProtocol(dialects[0].proto()), client.WithMetrics(reg, "a"))
	require.Nil(t, c)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "metrics")
}

// count is testutil.GatherAndCount that fails the test on error.
func count(t *testing.T, reg prometheus.Gatherer, names ...string) int {
	t.Helper()
	n, err := promtest.GatherAndCount(reg, names...)
	require.NoError(t, err)
	return n
}

// zap logs state changes and errors, never one line per frame: a burst of
// bad frames logs once per reason, a reconnect logs the loss and the new
// connection.
func TestLogsStateChangesNotFrames(t *testing.T) {
	d := dialects[0]
	srv := newServer(t, d.server)
	core, logs := observer.New(zap.DebugLevel)
	c := dial(t, srv, d.proto(), fastBackoff(), client.WithLogger(zap.New(core)))
	ctx := testutil.Context(t)
	sub, err := c.Subscribe(ctx, []string{d.topics[0]})
	require.NoError(t, err)
	require.NoError(t, srv.WaitConnections(ctx, 1))

	for i := range 200 {
		srv.PublishRaw([]byte("garbage"))
		srv.PublishRaw([]byte(`{"channel_name":"nope","notification":{}}`))
		srv.Publish(d.topics[0], payload(d.name, d.topics[0], i))
	}
	for range 200 {
		receive(t, sub) // every frame before it has been handled
	}
	drops := logs.FilterMessage("dropped frame").All()
	// The 1st, 2nd, 4th, 8th... drop of each reason is logged.
	assert.LessOrEqual(t, len(drops), 2*bits.Len(200), "logarithmic in the drops, not one line per frame")
	assert.NotEmpty(t, drops)

	srv.DropConnections()
	waitEvent(t, c, client.Resubscribed)
	lost := logs.FilterMessage("connection lost").All()
	require.Len(t, lost, 1)
	assert.Equal(t, zap.WarnLevel, lost[0].Level)
	assert.Contains(t, lost[0].ContextMap(), "error")
	assert.Len(t, logs.FilterMessage("connected").All(), 2, "first connection and the reconnect")
	assert.Less(t, logs.Len(), 2*bits.Len(200)+10, "a handful of lines for 600 frames and a reconnect")
}
