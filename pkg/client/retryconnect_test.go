package client_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// TestRetryOnFailedConnect: with no server yet, Dial returns and keeps
// dialing; subscriptions made meanwhile are queued, flow once the server
// comes up on the address, and a topic it refuses ends its subscription
// with the refusal.
func TestRetryOnFailedConnect(t *testing.T) {
	srv := newServer(t, thalex.Name)
	srv.Stop()
	ctx := testutil.Context(t)
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
	srv := newServer(t, thalex.Name)
	srv.Stop()
	_, err := client.Dial(testutil.Context(t), srv.URL(), client.WithProtocol(dialects[0].proto()))
	require.Error(t, err)
}

// TestRetryOnFailedConnectLateSubscribe: a Subscribe made while the first
// connection's restore waits for its acknowledgement is queued after the
// restore collected its topics. It goes out in a round of its own before
// the connection is handed out, and the restored topics are not
// subscribed twice (for Ethereum a second server subscription would
// deliver every notification twice).
func TestRetryOnFailedConnectLateSubscribe(t *testing.T) {
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			srv := newServer(t, d.server)
			srv.Stop()
			ctx := testutil.Context(t)
			c, err := client.Dial(ctx, srv.URL(), client.WithProtocol(d.proto()),
				client.WithRetryOnFailedConnect(), fastBackoff())
			require.NoError(t, err)
			t.Cleanup(func() { _ = c.Close() })
			early, err := c.Subscribe(ctx, []string{d.topics[0]})
			require.NoError(t, err)

			srv.SetResponseDelay(100 * time.Millisecond)
			require.NoError(t, srv.Start())
			method := map[string]string{"ethereum": "eth_subscribe", "ethereal": "subscribe"}[d.name]
			if method == "" {
				method = "public/subscribe"
			}
			require.NoError(t, srv.WaitReceived(ctx, method, 1))
			late, err := c.Subscribe(ctx, []string{d.topics[1]})
			require.NoError(t, err)
			assert.NotEqual(t, client.StateConnected, c.State(), "queued while the restore waited")

			waitEvent(t, c, client.Connected)
			srv.SetResponseDelay(0)
			require.NoError(t, srv.WaitSubscribers(ctx, d.topics[1], 1))
			srv.Publish(d.topics[0], payload(d.name, d.topics[0], 1))
			srv.Publish(d.topics[1], payload(d.name, d.topics[1], 1))
			assert.Equal(t, d.topics[1], receive(t, late).Topic)
			// Every frame before late's has been routed by now.
			assert.Len(t, early.C(), 1, "one publish, one message")
			assert.Equal(t, uint64(1), receive(t, early).Seq)
		})
	}
}

// TestRetryOnFailedConnectDuringAnOutage: with the option, a Subscribe
// made while the client reconnects returns at once (queued), the topic
// is subscribed with the restore and its first message is flagged
// Reconnected; a call made meanwhile fails at once, naming the failure.
func TestRetryOnFailedConnectDuringAnOutage(t *testing.T) {
	srv := newServer(t, thalex.Name)
	ctx := testutil.Context(t)
	c := dial(t, srv, dialects[0].proto(), client.WithRetryOnFailedConnect(),
		client.WithReconnectWait(50*time.Millisecond, 100*time.Millisecond))
	waitEvent(t, c, client.Connected)
	srv.Stop()
	waitEvent(t, c, client.Disconnected)

	start := time.Now()
	sub, err := c.Subscribe(ctx, []string{"ticker.LATE.raw"})
	require.NoError(t, err)
	_, callErr := c.CallRaw(ctx, "public/get_time", nil)
	assert.Less(t, time.Since(start), time.Second, "neither waited for the connection")
	require.ErrorIs(t, callErr, client.ErrConnectionLost)
	assert.Contains(t, callErr.Error(), "not connected (reconnecting)")
	assert.Regexp(t, "server closed the connection|read:|failed to dial", callErr.Error(), "names why")

	require.NoError(t, srv.Start())
	require.NoError(t, srv.WaitSubscribers(ctx, "ticker.LATE.raw", 1))
	srv.Publish("ticker.LATE.raw", []byte(`{"n":1}`))
	m := receive(t, sub)
	assert.True(t, m.Reconnected(), "asked for while the server was out of reach")
}
