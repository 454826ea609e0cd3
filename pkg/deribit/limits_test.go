package deribit_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/deribit"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/pool"
	"github.com/wsfan/wsfan/pkg/protocol/protocoltest"
)

// 1,000 channels go out as requests of at most MaxChannels channels and
// MaxFrameBytes bytes, every channel once; long channel names are split by
// size before the count is reached; WithResubscribeChunk's count applies,
// and the frame cap still holds.
func TestSubscribeKeepsDeribitRequestLimits(t *testing.T) {
	short := make([]string, 1000)
	long := make([]string, 1000)
	for i := range short {
		short[i] = fmt.Sprintf("book.BTC-%d-C.100ms", i)
		long[i] = fmt.Sprintf("trades.option.BTC-27DEC26-%06d-%s.100ms", i, strings.Repeat("C", 120))
	}
	for _, tc := range []struct {
		name       string
		names      []string
		chunk      int
		maxPerCall int
	}{
		{"short names", short, 0, deribit.MaxChannels},
		{"long names", long, 0, deribit.MaxChannels},
		{"chunk 100", short, 100, 100},
		{"chunk 1000, long names", long, 1000, 1000},
	} {
		b := protocoltest.SubscribeBatch(t, deribit.Protocol(), tc.names, tc.chunk)
		var all []string
		for i, m := range b.Messages {
			assert.LessOrEqual(t, len(m), deribit.MaxFrameBytes, "%s: frame %d", tc.name, i)
			assert.LessOrEqual(t, len(b.Requests[i].Topics), tc.maxPerCall, "%s: request %d", tc.name, i)
			for _, topic := range b.Requests[i].Topics {
				all = append(all, topic.Name)
			}
		}
		assert.Equal(t, tc.names, all, "%s: every channel once, in order", tc.name)
	}
	assert.Len(t, protocoltest.SubscribeBatch(t, deribit.Protocol(), short, 0).Messages, 4, "1,000 short channels: 4 requests of 250")
	assert.Greater(t, len(protocoltest.SubscribeBatch(t, deribit.Protocol(), long, 0).Messages), 4, "long channels: split by size")
}

// dialDeribit connects to srv with the dialect's defaults and a
// reconnect backoff of a few milliseconds.
func dialDeribit(t *testing.T, srv *exchangetest.Server, opts ...client.Option) *client.Client {
	t.Helper()
	opts = append([]client.Option{client.WithProtocol(deribit.Protocol(deribit.WithHeartbeat(0))),
		client.WithBackoff(func() backoff.BackOff { return backoff.NewConstantBackOff(5 * time.Millisecond) })}, opts...)
	c, err := client.Dial(testutil.Context(t), srv.URL(), opts...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// 1,000 option channels with long names in one Subscribe, against a
// server that refuses a request frame over 32 KiB as Deribit does: all
// are subscribed and deliver; after the server restarts, all are
// restored on the first new connection (no reconnect loop) and deliver
// again.
func TestThousandChannelsAgainstTheFrameLimit(t *testing.T) {
	srv := exchangetest.NewServer(deribit.Name)
	t.Cleanup(srv.Close)
	c := dialDeribit(t, srv, client.Buffer(4096))
	names := make([]string, 1000)
	for i := range names {
		names[i] = fmt.Sprintf("trades.option.BTC-27DEC26-%06d-C-%s.100ms", i, strings.Repeat("x", 100))
	}
	ctx := testutil.Context(t)
	sub, err := c.Subscribe(ctx, names)
	require.NoError(t, err)
	for _, r := range srv.Received() {
		require.LessOrEqual(t, len(r.Data), 32<<10, "no request over the server's limit")
	}
	deliverAll := func(round int) {
		t.Helper()
		for _, name := range names {
			require.Equal(t, 1, srv.Subscribers(name), name)
			srv.Publish(name, fmt.Appendf(nil, `{"round":%d}`, round))
		}
		got := map[string]bool{}
		for len(got) < len(names) {
			select {
			case m := <-sub.C():
				got[m.Topic] = true
			case <-ctx.Done():
				t.Fatalf("round %d: %d of %d channels delivered", round, len(got), len(names))
			}
		}
	}
	deliverAll(1)

	srv.Stop()
	require.NoError(t, srv.Start())
	disconnects := 0
	for restored := false; !restored; {
		select {
		case ev := <-c.Events():
			switch ev.Kind {
			case client.Disconnected:
				disconnects++
			case client.Resubscribed:
				require.Equal(t, len(names), ev.Topics)
				restored = true
			}
		case <-ctx.Done():
			t.Fatal("not restored")
		}
	}
	assert.Equal(t, 1, disconnects, "restored on the first new connection")
	deliverAll(2)
}

// An error without an id, Deribit's answer to a request frame over its
// size limit, fails the request it answers at once with the server's
// message, not after the request timeout; the connection stays.
func TestErrorWithoutIDFailsTheOldestRequest(t *testing.T) {
	srv := exchangetest.NewServer(deribit.Name)
	t.Cleanup(srv.Close)
	c := dialDeribit(t, srv, client.WithRequestTimeout(time.Hour))
	big := []byte(`{"pad":"` + strings.Repeat("x", 40<<10) + `"}`)
	for range 2 {
		err := c.Call(testutil.Context(t), "public/get_time", json.RawMessage(big), nil)
		var rpcErr *client.RPCError
		require.ErrorAs(t, err, &rpcErr)
		assert.Equal(t, -32600, rpcErr.Code)
		assert.Equal(t, "request entity too large", rpcErr.Message)
	}
	var now int64
	require.NoError(t, c.Call(testutil.Context(t), "public/get_time", nil, &now), "the connection is kept")
	assert.Positive(t, now)
}

// Against an exchange that keeps Deribit's subscription limit (bursts of
// 10 requests, then 3.3 a second), a program subscribing channel after
// channel is refused nothing by default: its Subscribes wait for their
// turn. With the limit turned off, the same program is refused with
// 10028, which ends the session as Deribit ends it: a subscribe in flight
// fails with the lost connection, never as refused for good.
func TestSubscribesKeepDeribitsSubscriptionLimitByDefault(t *testing.T) {
	const subscribes = 14
	run := func(opts ...client.Option) (received int, lost error) {
		srv := exchangetest.NewServer(deribit.Name,
			exchangetest.WithRateLimit(float64(deribit.SubscribeLimit.Rate)/3_000, deribit.SubscribeLimit.Burst/3_000))
		t.Cleanup(srv.Close)
		opts = append([]client.Option{client.WithProtocol(deribit.Protocol(deribit.WithHeartbeat(0)))}, opts...)
		c, err := client.Dial(testutil.Context(t), srv.URL(), opts...)
		require.NoError(t, err)
		defer c.Close()
		for i := range subscribes {
			_, err := c.Subscribe(testutil.Context(t), []string{fmt.Sprintf("ticker.C%d-PERPETUAL.100ms", i)})
			if err != nil {
				var refused *client.RefusedError
				require.False(t, errors.As(err, &refused), "subscribe %d refused for good: %v", i, err)
				return srv.CountReceived("public/subscribe"), err
			}
		}
		return srv.CountReceived("public/subscribe"), nil
	}
	received, lost := run()
	require.NoError(t, lost)
	assert.Equal(t, subscribes, received, "paced: every request accepted the first time")
	_, lost = run(client.WithRateLimit())
	assert.ErrorIs(t, lost, client.ErrConnectionLost, "unpaced: refused with 10028, which ends the session")
}

// Deribit ends the session with its 10028 refusal: the test exchange
// closes the connection once the refusal is written, and the client,
// told by the dialect, waits for the credits to refill (ThrottleRefill)
// before it connects again, instead of reconnecting at once into a budget
// still empty.
func TestTooManyRequestsEndsTheSessionAndReconnectsAfterTheRefill(t *testing.T) {
	srv := exchangetest.NewServer(deribit.Name, exchangetest.WithRateLimit(0.5, 2))
	t.Cleanup(srv.Close)
	c := dialDeribit(t, srv)
	ctx := testutil.Context(t)
	var refused *client.RPCError
	for i := 0; refused == nil; i++ {
		require.Less(t, i, 5, "never refused")
		err := c.Call(ctx, "public/get_time", nil, nil)
		if errors.As(err, &refused) {
			assert.Equal(t, 10028, refused.Code)
		}
	}
	for {
		select {
		case ev := <-c.Events():
			if ev.Kind != client.Reconnecting {
				continue
			}
			assert.GreaterOrEqual(t, ev.Wait, deribit.ThrottleRefill-time.Second, "the first reconnect waits for the refill")
			assert.LessOrEqual(t, ev.Wait, deribit.ThrottleRefill)
			return
		case <-ctx.Done():
			t.Fatal("the session did not end")
		}
	}
}

// A restore larger than Deribit's subscription budget holds at once (more
// than 9 requests of 250 channels) goes out in rounds, each waiting for
// its credits: against an exchange keeping the budget, every channel is
// restored on the first new connection, none refused with 10028 (which
// would end the session again).
func TestRestoreBeyondTheBudgetIsPaced(t *testing.T) {
	srv := exchangetest.NewServer(deribit.Name,
		exchangetest.WithRateLimit(float64(deribit.SubscribeLimit.Rate)/3_000, deribit.SubscribeLimit.Burst/3_000))
	t.Cleanup(srv.Close)
	c := dialDeribit(t, srv, client.Buffer(1))
	ctx := testutil.Context(t)
	const channels = 3000 // 12 requests: 9 at once, then 3 as the budget refills
	for part := range 3 {
		names := make([]string, channels/3)
		for i := range names {
			names[i] = fmt.Sprintf("ticker.P%dC%d-PERPETUAL.100ms", part, i)
		}
		_, err := c.Subscribe(ctx, names)
		require.NoError(t, err)
	}
	drain(c)
	srv.DropConnections()
	disconnects := 0
	for {
		select {
		case ev := <-c.Events():
			switch ev.Kind {
			case client.Disconnected:
				disconnects++
				require.Equal(t, 1, disconnects, "the restore ended the session: %v", ev.Err)
			case client.Resubscribed:
				assert.Equal(t, channels, ev.Topics)
				return
			}
		case <-ctx.Done():
			t.Fatal("not restored")
		}
	}
}

// drain empties c's event channel.
func drain(c *client.Client) {
	for {
		select {
		case <-c.Events():
		default:
			return
		}
	}
}

// Deribit refuses a 33rd connection from one IP address: a Pool that
// would need it fails the Subscribe naming the limit, and keeps the 32 it
// has.
func TestPoolKeepsDeribitsConnectionsPerIP(t *testing.T) {
	srv := exchangetest.NewServer(deribit.Name)
	t.Cleanup(srv.Close)
	ctx := testutil.Context(t)
	p, err := pool.Dial(ctx, srv.URL(), 1, client.WithProtocol(deribit.Protocol(deribit.WithHeartbeat(0))))
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })
	for i := range deribit.ConnectionsPerIP {
		_, err := p.Subscribe(ctx, []string{fmt.Sprintf("ticker.C%d-PERPETUAL.100ms", i)})
		require.NoError(t, err, "topic %d", i)
	}
	_, err = p.Subscribe(ctx, []string{"ticker.ONE-MORE.100ms"})
	require.ErrorIs(t, err, pool.ErrFull)
	assert.Contains(t, err.Error(), "limit of 32 connections from one IP address")
	assert.Equal(t, deribit.ConnectionsPerIP, p.Connections())
	assert.Equal(t, deribit.ConnectionsPerIP, srv.Connections())
}
