package client_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/exchangetest"
)

// TestRetryOnFailedConnect: with no server yet, Dial returns and keeps
// dialing; subscriptions made meanwhile are queued, flow once the server
// comes up on the address, and a topic it refuses ends its subscription
// with the refusal.
func TestRetryOnFailedConnect(t *testing.T) {
	srv := newServer(t, exchangetest.Thalex)
	srv.Stop()
	ctx := testCtx(t)
	c, err := client.Dial(ctx, srv.URL(), client.WithProtocol(dialects[0].proto()),
		client.WithRetryOnFailedConnect(), fastBackoff())
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	assert.NotEqual(t, client.StateConnected, c.State())

	sub, err := c.Subscribe(ctx, []string{"ticker.A.raw", "ticker.B.raw"})
	require.NoError(t, err)
	refused, err := c.Subscribe(ctx, []string{"ticker.NO.raw"})
	require.NoError(t, err)

	srv.SetRefused("ticker.NO.raw")
	require.NoError(t, srv.Start())
	require.NoError(t, srv.WaitSubscribers(ctx, "ticker.B.raw", 1))
	srv.Publish("ticker.A.raw", []byte(`{"n":1}`))
	srv.Publish("ticker.B.raw", []byte(`{"n":2}`))
	assert.Equal(t, "ticker.A.raw", receive(t, sub).Topic)
	assert.Equal(t, "ticker.B.raw", receive(t, sub).Topic)
	waitEvent(t, c, client.Connected)

	err = <-refused.Err()
	var re *client.RefusedError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, []string{"ticker.NO.raw"}, re.Topics)
}

// TestDialFailsWithoutRetry: by default a failed first dial fails Dial.
func TestDialFailsWithoutRetry(t *testing.T) {
	srv := newServer(t, exchangetest.Thalex)
	srv.Stop()
	_, err := client.Dial(testCtx(t), srv.URL(), client.WithProtocol(dialects[0].proto()))
	require.Error(t, err)
}
