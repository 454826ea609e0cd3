package client_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/clock"
	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// t0 is when the fake clocks of the pacing tests start.
var t0 = time.Unix(1_700_000_000, 0)

// A burst of 1,000 calls under a limit of 50 a second, with a server
// enforcing the same limit: every call waits for its turn instead of being
// refused, and the last goes out (1000-1)/50 s after the first, on a fake
// clock shared by client and server.
func TestRateLimitPacesABurst(t *testing.T) {
	const calls, rate = 1000, 50
	clk := clock.NewFake(t0)
	srv := newServer(t, thalex.Name, exchangetest.WithRateLimit(rate, 1), exchangetest.WithClock(clk.Now))
	srv.Handle("public/time", func(json.RawMessage) (any, *protocol.Error) { return 1, nil })
	c := dial(t, srv, thalex.Protocol(thalex.WithNotices(false)),
		client.WithRateLimit(client.RateLimit{Rate: rate, Burst: 1}), client.WithPaceClock(clk))

	// No deadline: a call would refuse at once to wait past it, and the
	// simulated wait is longer than the test's real-time budget.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errs := make(chan error, calls)
	for range calls {
		go func() { errs <- c.Call(ctx, "public/time", nil, nil) }()
	}

	// Simulated time moves to the next release only once every call is
	// answered or waiting for its credits, so the server sees each request
	// at the time it was let go.
	guard := time.After(60 * time.Second)
	answered := 0
	for answered < calls {
		changed := clk.Changed()
		if answered+clk.Timers() == calls && clk.AdvanceToNext() {
			continue
		}
		select {
		case err := <-errs:
			require.NoError(t, err, "call %d", answered+1)
			answered++
		case <-changed:
		case <-guard:
			t.Fatalf("%d of %d calls answered, %d waiting", answered, calls, clk.Timers())
		}
	}
	assert.Equal(t, 19980*time.Millisecond, clk.Now().Sub(t0))
	assert.Equal(t, calls, srv.CountReceived("public/time"))
}

// The restore after a reconnect goes out as one frame without waiting,
// and its credits are taken: the calls after it wait for them.
func TestRateLimitChargesTheRestore(t *testing.T) {
	clk := clock.NewFake(t0)
	srv := newServer(t, thalex.Name)
	srv.Handle("public/time", func(json.RawMessage) (any, *protocol.Error) { return 1, nil })
	// 3 credits: 1 for the subscribe, 1 for the restore, 1 for a call.
	c := dial(t, srv, thalex.Protocol(thalex.WithNotices(false)), fastBackoff(),
		client.WithRateLimit(client.RateLimit{Rate: 1, Burst: 3}), client.WithPaceClock(clk))
	ctx := testutil.Context(t)
	_, err := c.Subscribe(ctx, []string{"ticker.BTC-PERPETUAL.raw", "ticker.ETH-PERPETUAL.raw"})
	require.NoError(t, err)
	drainEvents(c)

	srv.Stop()
	srv.ResetReceived()
	require.NoError(t, srv.Start())
	waitEvent(t, c, client.Resubscribed)
	assert.Len(t, srv.Received(), 1, "the restore is one frame")

	require.NoError(t, c.Call(ctx, "public/time", nil, nil), "the last credit")
	answered := make(chan error, 1)
	go func() { answered <- c.Call(ctx, "public/time", nil, nil) }()
	require.NoError(t, clk.WaitTimers(ctx, 1), "the next call waits for a credit")
	clk.AdvanceToNext()
	require.NoError(t, <-answered)
	assert.Equal(t, time.Second, clk.Now().Sub(t0))
}

// A call whose context ends while it waits gives its credits back.
func TestRateLimitWaitEndsWithTheContext(t *testing.T) {
	clk := clock.NewFake(t0)
	srv := newServer(t, thalex.Name)
	srv.Handle("public/time", func(json.RawMessage) (any, *protocol.Error) { return 1, nil })
	c := dial(t, srv, thalex.Protocol(thalex.WithNotices(false)),
		client.WithRateLimit(client.RateLimit{Rate: 1, Burst: 1}), client.WithPaceClock(clk))
	ctx := testutil.Context(t)
	require.NoError(t, c.Call(ctx, "public/time", nil, nil))

	// A wait longer than the deadline fails at once.
	short, cancelShort := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancelShort()
	err := c.Call(short, "public/time", nil, nil)
	require.ErrorIs(t, err, client.ErrTimeout)
	assert.Contains(t, err.Error(), "rate limit")

	// A wait given up gives its credit back to the next call.
	waiting, cancelWait := context.WithCancel(ctx)
	answered := make(chan error, 1)
	go func() { answered <- c.Call(waiting, "public/time", nil, nil) }()
	require.NoError(t, clk.WaitTimers(ctx, 1))
	cancelWait()
	require.ErrorIs(t, <-answered, context.Canceled)
	assert.Zero(t, clk.Timers())

	go func() { answered <- c.Call(context.WithoutCancel(ctx), "public/time", nil, nil) }()
	require.NoError(t, clk.WaitTimers(ctx, 1))
	clk.AdvanceToNext()
	require.NoError(t, <-answered)
	assert.Equal(t, time.Second, clk.Now().Sub(t0), "one credit a second, the refunded one included")
	assert.Equal(t, 2, srv.CountReceived("public/time"))
}

// A limit that cannot be kept makes Dial fail, naming it, before any
// dial; it never panics.
func TestWithRateLimitRefusesNonsense(t *testing.T) {
	for _, l := range []client.RateLimit{{Rate: 0, Burst: 1}, {Rate: 1, Burst: 0}} {
		c, err := client.Dial(context.Background(), "ws://127.0.0.1:1/", client.WithRateLimit(l))
		assert.Nil(t, c)
		assert.ErrorContains(t, err, "WithRateLimit: Rate")
		assert.ErrorContains(t, err, "must be positive")
	}
}
