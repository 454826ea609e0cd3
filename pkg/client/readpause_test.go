package client_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// A connection whose reader pauses before each read of its drained
// socket still reads every frame, in order, though each arrives while the
// reader waits in its read: the socket's low-water mark, raised while the
// reader pauses (a small frame never reaches it), is lowered again before
// the read, which would otherwise wait for 32 KiB.
func TestReadPauseReadsEveryFrame(t *testing.T) {
	var asked atomic.Int64
	srv, _, sub, topic := pausedClient(t, func() time.Duration { asked.Add(1); return time.Microsecond })

	require.Eventually(t, func() bool { return asked.Load() > 0 }, 5*time.Second, time.Millisecond,
		"the pause is asked before a read of the drained socket")
	for i := range 5 {
		n := asked.Load()
		time.Sleep(10 * time.Millisecond) // the reader waits in its read meanwhile
		srv.Publish(topic, fmt.Appendf(nil, `{"n":%d}`, i))
		m := receive(t, sub)
		assert.JSONEq(t, fmt.Sprintf(`{"n":%d}`, i), string(m.Data))
		require.Eventually(t, func() bool { return asked.Load() > n }, 5*time.Second, time.Millisecond,
			"the pause is asked again before the next read")
	}
}

// While a call waits for its answer, the reader does not pause: an
// answer is never held back to gather frames.
func TestReadPauseNotWhileACallWaits(t *testing.T) {
	var asked atomic.Int64
	srv, c, sub, topic := pausedClient(t, func() time.Duration { asked.Add(1); return time.Millisecond })
	srv.Handle("slow", func(json.RawMessage) (any, *protocol.Error) { return "late", nil })
	ctx := testutil.Context(t)

	srv.SetResponseDelay(time.Hour)
	errc := make(chan error, 1)
	callCtx, cancel := context.WithCancel(ctx)
	go func() { errc <- c.Call(callCtx, "slow", nil, nil) }()
	require.Eventually(t, func() bool { return srv.CountReceived("slow") == 1 }, 5*time.Second, time.Millisecond)
	before := asked.Load()
	for i := range 3 {
		srv.Publish(topic, fmt.Appendf(nil, `{"n":%d}`, i))
		receive(t, sub)
	}
	assert.Equal(t, before, asked.Load(), "no pause while the call waited")
	cancel()
	assert.Error(t, <-errc)
}

// pausedClient is a client with pause on a Thalex test exchange,
// subscribed to a topic the exchange has seen it subscribe.
func pausedClient(t *testing.T, pause client.ReadPause) (*exchangetest.Server, *client.Client, *client.Subscription, string) {
	t.Helper()
	srv := newServer(t, thalex.Name)
	c := dial(t, srv, dialects[0].proto(), client.WithReadPause(pause))
	ctx := testutil.Context(t)
	topic := dialects[0].topics[0]
	sub, err := c.Subscribe(ctx, []string{topic})
	require.NoError(t, err)
	require.NoError(t, srv.WaitSubscribers(ctx, topic, 1))
	return srv, c, sub, topic
}
