package client_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/exchangetest"
)

// TestStalledConsumerDoesNotDelayOthers: one subscription is never read;
// under every non-blocking policy the other still gets every message in
// order, and the stalled one accounts for every frame it was sent.
func TestStalledConsumerDoesNotDelayOthers(t *testing.T) {
	const sent, buffer = 300, 8
	for _, policy := range []client.OverflowPolicy{client.DropOldest, client.DropNewest, client.CloseSubscription} {
		t.Run(policy.String(), func(t *testing.T) {
			srv := newServer(t, exchangetest.Thalex)
			c := dial(t, srv, dialects[0].proto(), client.WithBufferSize(buffer), client.WithOverflow(policy))
			ctx := testCtx(t)
			stalled, err := c.Subscribe(ctx, []string{"ticker.STALLED.raw"})
			require.NoError(t, err)
			live, err := c.Subscribe(ctx, []string{"ticker.LIVE.raw"})
			require.NoError(t, err)

			// Interleave the two topics, reading the live one in lockstep:
			// each of its messages must arrive while the stalled
			// subscription's buffer is full.
			for i := 1; i <= sent; i++ {
				srv.Publish("ticker.STALLED.raw", fmt.Appendf(nil, `{"n":%d}`, i))
				srv.Publish("ticker.LIVE.raw", fmt.Appendf(nil, `{"n":%d}`, i))
				m := receive(t, live)
				require.Equal(t, uint64(i), m.Seq, "live subscription lost or reordered a message")
			}
			assert.Zero(t, live.Dropped())

			// The stalled subscription: what it holds plus what it dropped
			// is what it was sent.
			switch policy {
			case client.CloseSubscription:
				assert.ErrorIs(t, <-stalled.Err(), client.ErrSlowConsumer)
				n := 0
				for range stalled.C() {
					n++
				}
				assert.Equal(t, buffer, n, "the buffered messages stay readable")
				require.NoError(t, srv.WaitSubscribers(ctx, "ticker.STALLED.raw", 0), "ended topic is unsubscribed upstream")
			default:
				require.Eventually(t, func() bool { return stalled.Dropped() == sent-buffer }, 5*time.Second, time.Millisecond)
				var held []uint64
				for len(held) < buffer {
					held = append(held, receive(t, stalled).Seq)
				}
				first := uint64(1)
				if policy == client.DropOldest {
					first = sent - buffer + 1 // the freshest survive
				}
				for i, s := range held {
					assert.Equal(t, first+uint64(i), s)
				}
			}
		})
	}
}

// TestBlockPolicyDeliversEverything: Block never drops; it waits for the
// consumer, and Unsubscribe releases a reader blocked on it.
func TestBlockPolicyDeliversEverything(t *testing.T) {
	srv := newServer(t, exchangetest.Thalex)
	c := dial(t, srv, dialects[0].proto(), client.WithBufferSize(2), client.WithOverflow(client.Block))
	ctx := testCtx(t)
	sub, err := c.Subscribe(ctx, []string{"ticker.A.raw"})
	require.NoError(t, err)
	for i := 1; i <= 50; i++ {
		srv.Publish("ticker.A.raw", fmt.Appendf(nil, `{"n":%d}`, i))
	}
	for i := 1; i <= 50; i++ {
		require.Equal(t, uint64(i), receive(t, sub).Seq)
	}
	assert.Zero(t, sub.Dropped())

	// Fill the buffer and block the reader, then unsubscribe.
	for i := 0; i < 5; i++ {
		srv.Publish("ticker.A.raw", []byte(`{}`))
	}
	require.Eventually(t, func() bool { return len(sub.C()) == 2 }, 5*time.Second, time.Millisecond)
	require.NoError(t, sub.Unsubscribe(ctx))
	// The reader is free again: calls are answered.
	other, err := c.Subscribe(ctx, []string{"ticker.B.raw"})
	require.NoError(t, err)
	require.NoError(t, other.Unsubscribe(ctx))
}
