package client_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
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

const swapTopic = "ticker.BTC-PERPETUAL.100ms"

// teeFeed publishes a numbered ticker on every server it is given, the
// same message to each (Deribit's identity of a ticker is its
// timestamp), until stop; it returns the last number published.
func teeFeed(servers []*exchangetest.Server, stop <-chan struct{}) <-chan int {
	last := make(chan int, 1)
	go func() {
		n := 0
		defer func() { last <- n }()
		for n < 1_000_000 {
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
			n++
			payload := fmt.Appendf(nil, `{"timestamp":%d,"instrument_name":"BTC-PERPETUAL","seq":%d}`, n, n)
			for _, s := range servers {
				s.Publish(swapTopic, payload)
			}
		}
	}()
	return last
}

// seqReader reads a ticker subscription's seq numbers.
type seqReader struct {
	mu      sync.Mutex
	seqs    []int
	flagged int // messages flagged reconnected or gap
}

func (r *seqReader) read(sub *client.Subscription) {
	for m := range sub.C() {
		var v struct{ Seq int }
		if json.Unmarshal(m.Data, &v) != nil {
			continue
		}
		r.mu.Lock()
		r.seqs = append(r.seqs, v.Seq)
		if m.Reconnected() || m.Gap() {
			r.flagged++
		}
		r.mu.Unlock()
	}
}

func (r *seqReader) last() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.seqs) == 0 {
		return 0
	}
	return r.seqs[len(r.seqs)-1]
}

// SetEndpoints to a list without the endpoint in use moves to its first
// endpoint make before break: the ticker's numbers go on one by one,
// none missing and none twice, none flagged; the old server keeps its
// subscriber until the new one has its own; every topic (three,
// subscribed one by one) is subscribed there in one request; the old
// connection is closed once the move is done.
func TestSetEndpointsMovesWithoutAHole(t *testing.T) {
	old, next := exchangetest.NewServer(deribit.Name), exchangetest.NewServer(deribit.Name)
	t.Cleanup(old.Close)
	t.Cleanup(next.Close)
	c := dial(t, old, deribit.Protocol(deribit.WithHeartbeat(0)))
	ctx := testutil.Context(t)
	sub, err := c.Subscribe(ctx, []string{swapTopic})
	require.NoError(t, err)
	for _, topic := range []string{"ticker.ETH-PERPETUAL.100ms", "trades.BTC-PERPETUAL.100ms"} {
		_, err = c.Subscribe(ctx, []string{topic})
		require.NoError(t, err)
	}
	var r seqReader
	read := make(chan struct{})
	go func() { defer close(read); r.read(sub) }()
	stop := make(chan struct{})
	last := teeFeed([]*exchangetest.Server{old, next}, stop)
	require.Eventually(t, func() bool { return r.last() >= 20 }, 10*time.Second, time.Millisecond)

	// Sample who holds the topic while the move runs: one server at least.
	var sawNone atomic.Bool
	watched, endWatch := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(watched)
		for i := 0; i < 100_000; i++ {
			select {
			case <-endWatch:
				return
			case <-time.After(100 * time.Microsecond):
			}
			if next.Subscribers(swapTopic) == 0 && old.Subscribers(swapTopic) == 0 {
				sawNone.Store(true)
			}
		}
	}()
	require.NoError(t, c.SetEndpoints(ctx, next.URL()))
	close(endWatch)
	<-watched
	assert.False(t, sawNone.Load(), "a moment when neither server had the subscription")
	assert.Equal(t, 1, next.Subscribers(swapTopic))
	assert.Equal(t, 1, next.CountReceived("public/subscribe"), "the topics' subscribe requests on the new endpoint")
	assert.Equal(t, 1, next.CountSubscribes("trades.BTC-PERPETUAL.100ms"))
	require.Eventually(t, func() bool { return old.Connections() == 0 }, 10*time.Second, time.Millisecond)
	url, at := c.Endpoint()
	assert.Equal(t, next.URL(), url)
	assert.Equal(t, 0, at)
	assert.True(t, sawEvent(c, client.Moved), "a Moved event")

	// More messages on the new connection alone, then all of them read.
	mark := r.last()
	require.Eventually(t, func() bool { return r.last() >= mark+20 }, 10*time.Second, time.Millisecond)
	close(stop)
	n := <-last
	require.Eventually(t, func() bool { return r.last() == n }, 10*time.Second, time.Millisecond)
	require.NoError(t, c.Close())
	<-read
	r.mu.Lock()
	defer r.mu.Unlock()
	first := r.seqs[0]
	for i, s := range r.seqs {
		if s != first+i {
			t.Fatalf("message %d has seq %d, want %d (a hole or a duplicate)", i, s, first+i)
		}
	}
	assert.Zero(t, r.flagged, "messages flagged reconnected or gap")
}

// SetEndpoints to a list holding the endpoint in use keeps the
// connection: nothing is dialled, the index is the new list's.
func TestSetEndpointsKeepsTheConnectionInUse(t *testing.T) {
	cur, other := exchangetest.NewServer(deribit.Name), exchangetest.NewServer(deribit.Name)
	t.Cleanup(cur.Close)
	t.Cleanup(other.Close)
	c := dial(t, cur, deribit.Protocol(deribit.WithHeartbeat(0)))
	ctx := testutil.Context(t)
	_, err := c.Subscribe(ctx, []string{swapTopic})
	require.NoError(t, err)
	for len(c.Events()) > 0 { // the connection's own
		<-c.Events()
	}
	require.NoError(t, c.SetEndpoints(ctx, other.URL(), cur.URL()))
	url, at := c.Endpoint()
	assert.Equal(t, cur.URL(), url)
	assert.Equal(t, 1, at)
	assert.Zero(t, other.Connections())
	assert.Equal(t, 1, cur.Connections())
	select {
	case ev := <-c.Events():
		t.Fatalf("unexpected event %v", ev)
	default:
	}
}

// While cancel-on-disconnect holds on the connection, a move is refused
// with ErrSettingHeld and nothing changes.
func TestSetEndpointsRefusedWhileASessionSettingHolds(t *testing.T) {
	const method = "private/enable_cancel_on_disconnect"
	old, next := exchangetest.NewServer(deribit.Name), exchangetest.NewServer(deribit.Name)
	t.Cleanup(old.Close)
	t.Cleanup(next.Close)
	old.Handle(method, func(json.RawMessage) (any, *protocol.Error) { return "ok", nil })
	c := dial(t, old, deribit.Protocol(deribit.WithHeartbeat(0)))
	ctx := testutil.Context(t)
	_, err := c.Subscribe(ctx, []string{swapTopic})
	require.NoError(t, err)
	require.NoError(t, c.Call(ctx, method, map[string]string{"scope": "connection"}, nil))
	err = c.SetEndpoints(ctx, next.URL())
	require.ErrorIs(t, err, client.ErrSettingHeld)
	assert.Contains(t, err.Error(), next.URL())
	url, at := c.Endpoint()
	assert.Equal(t, old.URL(), url)
	assert.Equal(t, 0, at)
	assert.Zero(t, next.Connections())
	assert.Equal(t, 1, old.Subscribers(swapTopic))
}

// Cancel-on-disconnect made by the on-connect hook holds the connection
// as one the program made: the move is refused, the old connection (and
// the orders it would cancel) stays.
func TestSetEndpointsRefusedWhileTheHooksSettingHolds(t *testing.T) {
	const method = "private/enable_cancel_on_disconnect"
	old, next := exchangetest.NewServer(deribit.Name), exchangetest.NewServer(deribit.Name)
	t.Cleanup(old.Close)
	t.Cleanup(next.Close)
	for _, s := range []*exchangetest.Server{old, next} {
		s.Handle(method, func(json.RawMessage) (any, *protocol.Error) { return "ok", nil })
	}
	hook := client.WithOnConnect(func(ctx context.Context, c *client.Client) error {
		return c.Call(ctx, method, map[string]string{"scope": "connection"}, nil)
	})
	c := dial(t, old, deribit.Protocol(deribit.WithHeartbeat(0)), hook)
	ctx := testutil.Context(t)
	_, err := c.Subscribe(ctx, []string{swapTopic})
	require.NoError(t, err)
	err = c.SetEndpoints(ctx, next.URL())
	require.ErrorIs(t, err, client.ErrSettingHeld)
	url, _ := c.Endpoint()
	assert.Equal(t, old.URL(), url)
	assert.Zero(t, next.Connections())
	assert.Equal(t, 1, old.Connections())
	assert.Equal(t, 1, old.CountReceived(method), "the hook's setting, made once")
}

// sawEvent drains c's queued events and reports whether one was of kind.
func sawEvent(c *client.Client, kind client.EventKind) bool {
	seen := false
	for len(c.Events()) > 0 {
		if (<-c.Events()).Kind == kind {
			seen = true
		}
	}
	return seen
}

// A new endpoint that refuses a topic leaves the client where it was,
// on its old endpoints.
func TestSetEndpointsRefusedTopicKeepsTheOldEndpoints(t *testing.T) {
	old, next := exchangetest.NewServer(deribit.Name), exchangetest.NewServer(deribit.Name)
	t.Cleanup(old.Close)
	t.Cleanup(next.Close)
	next.SetRefused(swapTopic)
	c := dial(t, old, deribit.Protocol(deribit.WithHeartbeat(0)))
	ctx := testutil.Context(t)
	_, err := c.Subscribe(ctx, []string{swapTopic})
	require.NoError(t, err)
	err = c.SetEndpoints(ctx, next.URL())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the endpoints stay")
	url, at := c.Endpoint()
	assert.Equal(t, old.URL(), url)
	assert.Equal(t, 0, at)
	assert.Equal(t, 1, old.Subscribers(swapTopic))
	require.Eventually(t, func() bool { return next.Connections() == 0 }, 10*time.Second, time.Millisecond)
}

// Between connections the new list takes effect at once: the client,
// whose only endpoint is down, dials the new one and restores its topic
// there.
func TestSetEndpointsWhileReconnecting(t *testing.T) {
	old, next := exchangetest.NewServer(deribit.Name), exchangetest.NewServer(deribit.Name)
	t.Cleanup(old.Close)
	t.Cleanup(next.Close)
	c := dial(t, old, deribit.Protocol(deribit.WithHeartbeat(0)), client.WithReconnectWait(time.Hour, time.Hour))
	ctx := testutil.Context(t)
	_, err := c.Subscribe(ctx, []string{swapTopic})
	require.NoError(t, err)
	old.Stop()
	require.Eventually(t, func() bool { return c.State() == client.StateReconnecting }, 10*time.Second, time.Millisecond)
	require.NoError(t, c.SetEndpoints(ctx, next.URL()))
	require.NoError(t, next.WaitSubscribers(ctx, swapTopic, 1))
	require.Eventually(t, func() bool { return c.State() == client.StateConnected }, 10*time.Second, time.Millisecond)
	url, _ := c.Endpoint()
	assert.Equal(t, next.URL(), url)
}

// Bad lists are refused before anything is asked of the client.
func TestSetEndpointsRefusesABadList(t *testing.T) {
	srv := exchangetest.NewServer(deribit.Name)
	t.Cleanup(srv.Close)
	c := dial(t, srv, deribit.Protocol(deribit.WithHeartbeat(0)))
	ctx := testutil.Context(t)
	assert.Error(t, c.SetEndpoints(ctx))
	assert.ErrorContains(t, c.SetEndpoints(ctx, "http://example.com"), "ws://")
	require.NoError(t, c.Close())
	assert.ErrorIs(t, c.SetEndpoints(ctx, srv.URL()), client.ErrClosed)
}
