package client_test

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/deribit"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// Two endpoints: the preferred one goes down and the client dials the
// other at once, without a backoff wait, restoring its topics there; when
// that one goes down and the first is back, it goes back. Dial itself
// takes the second when the first does not answer.
func TestEndpointsFailOverAtOnce(t *testing.T) {
	a, b := newServer(t, thalex.Name), newServer(t, thalex.Name)
	ctx := testutil.Context(t)
	reg := prometheus.NewRegistry()
	c, err := client.Dial(ctx, a.URL(), client.WithProtocol(thalex.Protocol()), client.WithEndpoints(b.URL()),
		client.WithMetrics(reg, "feed"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	const topic = "ticker.BTC-PERPETUAL.raw"
	sub, err := c.Subscribe(ctx, []string{topic})
	require.NoError(t, err)
	shownA, i := c.Endpoint()
	assert.Equal(t, 0, i)
	inUse := func(shown string) float64 {
		return metric(t, reg, "wsfan_client_endpoint", map[string]string{"connection": "feed", "endpoint": shown})
	}
	assert.Equal(t, 1.0, inUse(shownA), "the metric names the endpoint in use")

	a.Stop()
	ev := waitEvent(t, c, client.Reconnecting)
	assert.Equal(t, 1, ev.Endpoint, "the next endpoint")
	assert.Zero(t, ev.Wait, "dialled at once")
	assert.Equal(t, 1, waitEvent(t, c, client.Connected).Endpoint)
	require.NoError(t, b.WaitSubscribers(ctx, topic, 1), "restored on the other endpoint")
	b.Publish(topic, payload("thalex", topic, 1))
	assert.True(t, receive(t, sub).Reconnected())
	shown, i := c.Endpoint()
	assert.Equal(t, 1, i)
	assert.Contains(t, shown, "127.0.0.1")
	assert.Equal(t, 1.0, inUse(shown))
	assert.Zero(t, inUse(shownA))

	require.NoError(t, a.Start())
	b.Stop()
	assert.Equal(t, 0, waitEvent(t, c, client.Connected).Endpoint, "back on the first")
	require.NoError(t, a.WaitSubscribers(ctx, topic, 1))

	a.Stop()
	_, err = client.Dial(ctx, a.URL(), client.WithProtocol(thalex.Protocol()), client.WithEndpoints(b.URL()))
	require.Error(t, err, "both down")
	require.NoError(t, b.Start())
	d, err := client.Dial(ctx, a.URL(), client.WithProtocol(thalex.Protocol()), client.WithEndpoints(b.URL()))
	require.NoError(t, err, "the first down, Dial takes the second")
	defer d.Close()
	_, i = d.Endpoint()
	assert.Equal(t, 1, i)
}

// A call the dialect names read-only whose connection dies before its
// answer is made again on the next connection (here the other
// endpoint's); an order never is.
func TestReadOnlyCallIsMadeAgainOnTheNextConnection(t *testing.T) {
	a, b := newServer(t, deribit.Name), newServer(t, deribit.Name)
	ctx := testutil.Context(t)
	c, err := client.Dial(ctx, a.URL(), client.WithProtocol(deribit.Protocol(deribit.WithHeartbeat(0))), client.WithEndpoints(b.URL()))
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	a.SetResponseDelay(time.Hour)

	call := func(method string) error {
		done := make(chan error, 1)
		go func() { done <- c.Call(ctx, method, nil, nil) }()
		require.NoError(t, a.WaitReceived(ctx, method, 1))
		a.DropConnections()
		return <-done
	}
	require.NoError(t, call("public/get_time"), "read-only: made again on the other endpoint")
	assert.Equal(t, 1, b.CountReceived("public/get_time"))

	require.NoError(t, a.Start())
	b.SetResponseDelay(time.Hour)
	done := make(chan error, 1)
	go func() { done <- c.Call(ctx, "private/buy", nil, nil) }()
	require.NoError(t, b.WaitReceived(ctx, "private/buy", 1))
	b.DropConnections()
	err = <-done
	require.ErrorIs(t, err, client.ErrConnectionLost, "an order is never made again")
	assert.Zero(t, a.CountReceived("private/buy"))
}
