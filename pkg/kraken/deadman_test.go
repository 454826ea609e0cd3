package kraken_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/clock"
	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/kraken"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// switchCall is one cancel_all_orders_after the test exchange received.
type switchCall struct {
	conn    int
	timeout int64
	token   string
}

// switchCalls returns the cancel_all_orders_after calls srv received.
func switchCalls(srv *exchangetest.Server) []switchCall {
	var out []switchCall
	for _, r := range srv.Received() {
		var f struct {
			Method string `json:"method"`
			Params struct {
				Timeout int64  `json:"timeout"`
				Token   string `json:"token"`
			} `json:"params"`
		}
		if json.Unmarshal(r.Data, &f) == nil && f.Method == "cancel_all_orders_after" {
			out = append(out, switchCall{conn: r.Conn, timeout: f.Params.Timeout, token: f.Params.Token})
		}
	}
	return out
}

// fireUntil fires clk's timers one at a time until srv has received n
// calls of cancel_all_orders_after (a connection's refresher may be
// between timers, or a replaced connection's timer not yet stopped).
func fireUntil(ctx context.Context, t *testing.T, clk *clock.Fake, srv *exchangetest.Server, n int) {
	t.Helper()
	for range 50 {
		if len(switchCalls(srv)) >= n {
			return
		}
		require.NoError(t, clk.WaitTimers(ctx, 1))
		clk.AdvanceToNext()
		wait, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		_ = srv.WaitReceived(wait, "cancel_all_orders_after", n)
		cancel()
	}
	t.Fatalf("%d calls of cancel_all_orders_after, want %d", len(switchCalls(srv)), n)
}

// The dead man's switch, once armed, is made again every third of its
// timeout with the connection's token; a new connection arms it again
// with its own token before it is handed out and refreshes it in turn;
// disarmed (timeout 0), it is neither refreshed nor made again on the
// next connection.
func TestDeadMansSwitchIsRefreshedAndKeptAcrossReconnects(t *testing.T) {
	srv, _, restURL := venueWithTokens(t)
	srv.Handle("cancel_all_orders_after", func(json.RawMessage) (any, *protocol.Error) {
		return json.RawMessage(`{"currentTime":"2023-09-21T15:49:29Z","triggerTime":"2023-09-21T15:50:29Z"}`), nil
	})
	ctx := testutil.Context(t)
	clk := clock.NewFake(time.Now())
	c := dialWithLogin(ctx, t, srv, restURL, kraken.WithClock(clk))

	require.Error(t, kraken.ArmDeadMansSwitch(ctx, c, 1500*time.Millisecond), "whole seconds")
	require.NoError(t, kraken.ArmDeadMansSwitch(ctx, c, time.Minute))
	fireUntil(ctx, t, clk, srv, 3)
	calls := switchCalls(srv)
	for _, call := range calls {
		assert.Equal(t, int64(60), call.timeout)
		assert.Equal(t, calls[0].token, call.token, "the connection's token")
		assert.NotEmpty(t, call.token)
	}

	drainEvents(c)
	srv.DropConnections()
	awaitConnected(ctx, t, c)
	calls = switchCalls(srv)
	require.Len(t, calls, 4, "armed again on the new connection before it was handed out")
	again := calls[3]
	assert.Equal(t, int64(60), again.timeout)
	assert.NotEqual(t, calls[0].conn, again.conn)
	assert.NotEqual(t, calls[0].token, again.token, "with the new connection's token")
	fireUntil(ctx, t, clk, srv, 5)
	assert.Equal(t, again.conn, switchCalls(srv)[4].conn, "refreshed on the new connection")

	require.NoError(t, kraken.DisarmDeadMansSwitch(ctx, c))
	calls = switchCalls(srv)
	require.Len(t, calls, 6)
	assert.Zero(t, calls[5].timeout, "disarmed")
	for range 3 {
		require.NoError(t, clk.WaitTimers(ctx, 1))
		clk.AdvanceToNext()
	}
	drainEvents(c)
	srv.DropConnections()
	awaitConnected(ctx, t, c)
	require.NoError(t, c.Call(ctx, "ping", nil, nil))
	assert.Len(t, switchCalls(srv), 6, "neither refreshed nor made again once disarmed")
}
