package client_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/ethereum"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// A node capping batches below the dialect's default (5 against 20)
// answers an oversized batch as go-ethereum does, one error and silence
// for the rest: the client sends those subscribes again in smaller
// batches at once, not after the request timeout, and keeps the smaller
// size for the restore, which every topic survives.
func TestBatchTooLargeIsSplitAndRetried(t *testing.T) {
	const n = 50
	srv := newServer(t, ethereum.Name, exchangetest.WithBatchCap(5))
	c := dial(t, srv, ethereum.Protocol(), fastBackoff(), client.WithRequestTimeout(time.Hour))
	topics := make([]string, n)
	for i := range topics {
		topics[i] = fmt.Sprintf(`["logs",{"address":"0x%040x"}]`, i)
	}
	ctx := testutil.Context(t)
	sub, err := c.Subscribe(ctx, topics)
	require.NoError(t, err)
	for _, topic := range topics {
		require.Equal(t, 1, srv.Subscribers(topic), topic)
	}

	drainEvents(c)
	srv.Stop()
	srv.ResetReceived()
	waitEvent(t, c, client.Disconnected)
	require.NoError(t, srv.Start())
	assert.Equal(t, n, waitEvent(t, c, client.Resubscribed).Topics)
	assert.Equal(t, n/5, srv.CountReceived("eth_subscribe"), "the restore goes out in batches the node takes")
	for _, topic := range topics {
		require.Equal(t, 1, srv.Subscribers(topic), topic)
		srv.Publish(topic, payload("ethereum", topic, 1))
	}
	got := map[string]bool{}
	for len(got) < n {
		got[receive(t, sub).Topic] = true
	}
}

// Subscribe during a reconnect waits for the connection and succeeds once
// it is back, instead of failing with ErrConnectionLost.
func TestSubscribeWaitsForTheReconnect(t *testing.T) {
	srv := newServer(t, thalex.Name)
	c := dial(t, srv, thalex.Protocol(thalex.WithNotices(false)), fastBackoff())
	ctx := testutil.Context(t)
	drainEvents(c)
	srv.Stop()
	waitEvent(t, c, client.Disconnected)
	done := make(chan error, 1)
	go func() {
		_, err := c.Subscribe(ctx, []string{"ticker.BTC-PERPETUAL.raw"})
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("Subscribe returned while the server was down: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	require.NoError(t, srv.Start())
	require.NoError(t, <-done)
	require.NoError(t, srv.WaitSubscribers(ctx, "ticker.BTC-PERPETUAL.raw", 1))
}

// A subscribe refused for the pace of requests (Thalex's 4, which keeps
// the session; Deribit's 10028 ends it, see package deribit) is sent
// again once the pace allows, and succeeds: not taken as every topic
// refused.
func TestThrottledSubscribeIsRetried(t *testing.T) {
	srv := newServer(t, thalex.Name, exchangetest.WithRateLimit(10, 1))
	c := dial(t, srv, thalex.Protocol(), fastBackoff())
	ctx := testutil.Context(t)
	_ = c.Call(ctx, "public/instruments", nil, nil) // the burst is spent
	sub, err := c.Subscribe(ctx, []string{"ticker.BTC-PERPETUAL.raw"})
	require.NoError(t, err)
	require.NoError(t, srv.WaitSubscribers(ctx, "ticker.BTC-PERPETUAL.raw", 1))
	srv.Publish("ticker.BTC-PERPETUAL.raw", payload("thalex", "ticker.BTC-PERPETUAL.raw", 1))
	receive(t, sub)
	assert.GreaterOrEqual(t, srv.CountReceived("public/subscribe"), 2, "refused once, then sent again")
}
