package client_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/deribit"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// awayFromPreferred dials preferred with fallback as its other endpoint
// (and opts), subscribes topic, and stops preferred so the client fails
// over; it returns once the client is connected to fallback.
func awayFromPreferred(t *testing.T, preferred, fallback *exchangetest.Server, topic string, opts ...client.Option) *client.Client {
	t.Helper()
	ctx := testutil.Context(t)
	opts = append([]client.Option{client.WithProtocol(deribit.Protocol()),
		client.WithEndpoints(fallback.URL()), client.WithSwitchBack(10*time.Millisecond, 50*time.Millisecond)}, opts...)
	c, err := client.Dial(ctx, preferred.URL(), opts...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	_, err = c.Subscribe(ctx, []string{topic})
	require.NoError(t, err)
	preferred.Stop()
	require.NoError(t, fallback.WaitSubscribers(ctx, topic, 1))
	require.Eventually(t, func() bool { return c.State() == client.StateConnected }, 5*time.Second, time.Millisecond)
	_, at := c.Endpoint()
	require.Equal(t, 1, at)
	return c
}

// Once the preferred endpoint is back and answers probes, the client
// takes it back: the topics are subscribed there and the fallback's
// connection is left.
func TestClientTakesThePreferredEndpointBack(t *testing.T) {
	const topic = "ticker.BTC-PERPETUAL.100ms"
	preferred, fallback := exchangetest.NewServer(deribit.Name), exchangetest.NewServer(deribit.Name)
	t.Cleanup(preferred.Close)
	t.Cleanup(fallback.Close)
	c := awayFromPreferred(t, preferred, fallback, topic)
	require.NoError(t, preferred.Start())
	ctx := testutil.Context(t)
	require.NoError(t, preferred.WaitSubscribers(ctx, topic, 1))
	require.Eventually(t, func() bool { return fallback.Connections() == 0 }, 5*time.Second, time.Millisecond)
	_, at := c.Endpoint()
	assert.Equal(t, 0, at)
	assert.Equal(t, client.StateConnected, c.State())
}

// A session setting made on the fallback's connection (Deribit's
// cancel-on-disconnect, connection scope) keeps the client there:
// closing that connection would cancel the orders placed on it.
func TestNoSwitchBackWhileASessionSettingHolds(t *testing.T) {
	const topic = "ticker.BTC-PERPETUAL.100ms"
	const method = "private/enable_cancel_on_disconnect"
	preferred, fallback := exchangetest.NewServer(deribit.Name), exchangetest.NewServer(deribit.Name)
	t.Cleanup(preferred.Close)
	t.Cleanup(fallback.Close)
	for _, s := range []*exchangetest.Server{preferred, fallback} {
		s.Handle(method, func(json.RawMessage) (any, *protocol.Error) { return "ok", nil })
	}
	c := awayFromPreferred(t, preferred, fallback, topic)
	ctx := testutil.Context(t)
	require.NoError(t, c.Call(ctx, method, map[string]string{"scope": "connection"}, nil))
	require.NoError(t, preferred.Start())
	time.Sleep(500 * time.Millisecond) // ten times the switch-back period
	_, at := c.Endpoint()
	assert.Equal(t, 1, at, "still on the fallback")
	assert.Zero(t, preferred.Subscribers(topic))
	assert.Equal(t, 1, fallback.Subscribers(topic))
}

// An on-connect hook that subscribes (a login, then its private
// channels) runs on the new connection too, and the switch still
// happens.
func TestSwitchBackWithAHookThatSubscribes(t *testing.T) {
	const topic, hooked = "ticker.BTC-PERPETUAL.100ms", "ticker.ETH-PERPETUAL.100ms"
	preferred, fallback := exchangetest.NewServer(deribit.Name), exchangetest.NewServer(deribit.Name)
	t.Cleanup(preferred.Close)
	t.Cleanup(fallback.Close)
	hook := func(ctx context.Context, c *client.Client) error {
		_, err := c.Subscribe(ctx, []string{hooked})
		return err
	}
	c := awayFromPreferred(t, preferred, fallback, topic, client.WithOnConnect(hook))
	ctx := testutil.Context(t)
	require.NoError(t, preferred.Start())
	require.NoError(t, preferred.WaitSubscribers(ctx, topic, 1))
	require.NoError(t, preferred.WaitSubscribers(ctx, hooked, 1))
	require.Eventually(t, func() bool { return fallback.Connections() == 0 }, 5*time.Second, time.Millisecond)
	_, at := c.Endpoint()
	assert.Equal(t, 0, at)
}
