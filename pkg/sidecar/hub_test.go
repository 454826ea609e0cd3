package sidecar

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// newTestUpstream starts a Thalex exchangetest server and an upstream
// connected to it. stop closes the upstream, which ends every pump; the
// server closes at the end of the test.
func newTestUpstream(t *testing.T, st *stats) (exch *exchangetest.Server, u *upstream, stop func()) {
	t.Helper()
	exch = exchangetest.NewServer(thalex.Name)
	t.Cleanup(exch.Close)
	u = newUpstream(exch.URL(), 0, []client.Option{
		client.WithProtocol(thalex.Protocol()),
		client.WithBackoff(func() backoff.BackOff { return backoff.NewConstantBackOff(time.Millisecond) }),
	}, st, zap.NewNop())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		u.run(ctx)
	}()
	_, err := u.feed(testutil.Context(t))
	require.NoError(t, err)
	return exch, u, func() {
		cancel()
		u.close()
		<-done
	}
}

// newTestHub builds a hub of Thalex topics over feed. At the end of
// the test its context is cancelled and stop is called (closing the
// upstream ends the pumps), then the hub waits for its goroutines.
func newTestHub(t *testing.T, cfg *Config, st *stats, feed func(context.Context) (client.Holder, error), stop func()) *hub {
	ctx, cancel := context.WithCancel(context.Background())
	live := new(atomic.Pointer[liveSettings])
	live.Store(newLiveSettings(cfg, nil, nil))
	h := newHub(ctx, cfg, live, thalex.Protocol(), feed,
		testTopicConfig(thalexWire, st), zap.NewNop())
	t.Cleanup(func() {
		cancel()
		if stop != nil {
			stop()
		}
		h.close()
	})
	return h
}

// refs returns the reference count of the hub's topic name, -1 if the
// hub has none.
func refs(h *hub, name string) int {
	for _, ts := range h.status() {
		if ts.Topic == name {
			return ts.Refs
		}
	}
	return -1
}

// Local subscribers of one topic share one upstream subscription; its
// messages reach them, and the last one leaving unsubscribes upstream once
// the grace period ends.
func TestHubSharesOneUpstreamSubscription(t *testing.T) {
	const name = "ticker.BTC-PERPETUAL.raw"
	var st stats
	exch, u, stop := newTestUpstream(t, &st)
	cfg := testConfig(t, func(c *Config) { c.Grace = time.Millisecond })
	h := newTestHub(t, cfg, &st, u.feed, stop)
	ctx := testutil.Context(t)

	a, err := reserveOne(h, name)
	require.NoError(t, err)
	b, err := reserveOne(h, name)
	require.NoError(t, err)
	require.Same(t, a, b)
	require.NoError(t, h.wait(ctx, a))
	require.NoError(t, h.wait(ctx, b))
	assert.Equal(t, 1, exch.CountSubscribes(name))
	assert.Equal(t, 2, refs(h, name))

	s, tr := newTestSession(cfg, &st, h, kindWS)
	tr.room = 0 // the socket takes nothing: the frame waits in the queue
	attachTo(a, s)
	exch.Publish(name, []byte(`{"p":1}`))
	require.Eventually(t, func() bool { n, _ := s.queued(); return n == 1 }, 5*time.Second, time.Millisecond)
	assert.Equal(t, [][]byte{textFrame([]byte(`{"channel_name":"ticker.BTC-PERPETUAL.raw","notification":{"p":1}}`))},
		takeAll(t, s))

	a.detach(s)
	h.release(a)
	h.release(b)
	require.NoError(t, exch.WaitReceived(ctx, "unsubscribe", 1))
	require.Eventually(t, func() bool { return len(h.list()) == 0 }, 5*time.Second, time.Millisecond)
}

// A subscriber arriving within the grace period keeps the upstream
// subscription.
func TestHubReserveCancelsGrace(t *testing.T) {
	const name = "ticker.BTC-PERPETUAL.raw"
	var st stats
	exch, u, stop := newTestUpstream(t, &st)
	h := newTestHub(t, testConfig(t, func(c *Config) { c.Grace = time.Hour }), &st, u.feed, stop)
	ctx := testutil.Context(t)

	a, err := reserveOne(h, name)
	require.NoError(t, err)
	require.NoError(t, h.wait(ctx, a))
	h.release(a)
	assert.Equal(t, 0, refs(h, name), "held through the grace period")
	b, err := reserveOne(h, name)
	require.NoError(t, err)
	require.NoError(t, h.wait(ctx, b))
	assert.Same(t, a, b)
	assert.Equal(t, 1, refs(h, name))
	assert.Equal(t, 1, exch.CountSubscribes(name))
}

// A failed upstream subscribe fails every waiter with its error and
// leaves no topic behind: the next reserve tries again.
func TestHubSubscribeFailure(t *testing.T) {
	var st stats
	var calls atomic.Int32
	refused := errors.New("refused")
	h := newTestHub(t, testConfig(t, nil), &st, oneByOne(func(context.Context, string) (client.Stream, error) {
		calls.Add(1)
		return nil, refused
	}).feed, nil)
	ctx := testutil.Context(t)

	for i := range 2 {
		tp, err := reserveOne(h, "a.b")
		require.NoError(t, err)
		require.ErrorIs(t, h.wait(ctx, tp), refused)
		assert.Empty(t, h.list())
		assert.Equal(t, int32(i+1), calls.Load())
	}
}

// reserve checks the topic limit for the whole request before it opens
// anything; validate checks a name.
func TestHubReserveLimits(t *testing.T) {
	var st stats
	h := newTestHub(t, testConfig(t, func(c *Config) { c.MaxTopics = 1 }), &st,
		oneByOne(func(ctx context.Context, _ string) (client.Stream, error) { // opens never finish before the end
			<-ctx.Done()
			return nil, ctx.Err()
		}).feed, nil)

	_, _, err := h.reserve(nil, []string{"a.b"})
	require.NoError(t, err)
	_, _, err = h.reserve(nil, []string{"a.b"})
	require.NoError(t, err, "a held topic does not count again")
	_, _, err = h.reserve(nil, []string{"a.b", "c.d"})
	require.EqualError(t, err, "the limit of 1 upstream topics is reached")
	assert.Equal(t, 2, refs(h, "a.b"), "a refused request reserves nothing")
	assert.Len(t, h.list(), 1)
	_, err = h.validate("bad name")
	require.ErrorIs(t, err, protocol.ErrInvalidTopic)
}

// The grace period may end while the upstream subscribe is still under
// way (every subscriber went away while waiting): the expiry waits for it
// and unsubscribes what it opened.
func TestHubExpiresATopicStillOpening(t *testing.T) {
	const name = "ticker.BTC-PERPETUAL.raw"
	var st stats
	exch, u, stop := newTestUpstream(t, &st)
	unblock := make(chan struct{})
	h := newTestHub(t, testConfig(t, func(c *Config) { c.Grace = time.Millisecond }), &st,
		testFeed(func(ctx context.Context, topics []*protocol.Topic) ([]client.Stream, []error, error) {
			<-unblock
			f, err := u.feed(ctx)
			if err != nil {
				return nil, nil, err
			}
			return f.SubscribeTopics(ctx, topics)
		}).feed, stop)
	ctx := testutil.Context(t)

	tp, err := reserveOne(h, name)
	require.NoError(t, err)
	gone, cancel := context.WithCancel(ctx)
	cancel()
	require.ErrorIs(t, h.wait(gone, tp), context.Canceled) // the subscriber leaves
	require.Eventually(t, func() bool { return len(h.list()) == 0 }, 5*time.Second, time.Millisecond,
		"the grace period ends while the subscribe is under way")
	close(unblock)
	require.NoError(t, exch.WaitReceived(ctx, "unsubscribe", 1))
	select {
	case <-tp.done:
	case <-ctx.Done():
		t.Fatal("the pump did not end")
	}
}

// An upstream subscription that ends by itself (refused after a
// reconnect) disconnects its local subscribers with the reason and leaves
// the hub.
func TestHubTopicLost(t *testing.T) {
	const name = "ticker.BTC-PERPETUAL.raw"
	var st stats
	exch, u, stop := newTestUpstream(t, &st)
	cfg := testConfig(t, nil)
	h := newTestHub(t, cfg, &st, u.feed, stop)
	ctx := testutil.Context(t)

	tp, err := reserveOne(h, name)
	require.NoError(t, err)
	require.NoError(t, h.wait(ctx, tp))
	s, _ := newTestSession(cfg, &st, h, kindWS)
	attachTo(tp, s)
	exch.SetRefused(name)
	exch.DropConnections()

	select {
	case <-tp.done:
	case <-ctx.Done():
		t.Fatal("the pump did not end")
	}
	require.Eventually(t, func() bool { _, closing := s.closeState(); return closing }, 5*time.Second, time.Millisecond)
	reason, _ := s.closeState()
	assert.Equal(t, "upstream_topic_lost", reason.label)
	assert.Contains(t, reason.text, name)
	assert.Empty(t, h.list())
}

// reserveOne reserves one topic.
func reserveOne(h *hub, name string) (*topic, error) {
	ts, _, err := h.reserve(nil, []string{name})
	if err != nil {
		return nil, err
	}
	return ts[0], nil
}

// testFeed is a client.Holder made of a subscribe function, as a test
// stands in for a source: its unsubscribes end each stream, it forwards
// no call, and it is always connected, its topics healthy.
type testFeed func(ctx context.Context, topics []*protocol.Topic) ([]client.Stream, []error, error)

func (f testFeed) SubscribeTopics(ctx context.Context, topics []*protocol.Topic) ([]client.Stream, []error, error) {
	return f(ctx, topics)
}

func (f testFeed) UnsubscribeStreams(ctx context.Context, streams []client.Stream) error {
	var first error
	for _, s := range streams {
		if err := s.Unsubscribe(ctx); err != nil && !errors.Is(err, client.ErrUnsubscribed) && first == nil {
			first = err
		}
	}
	return first
}

func (f testFeed) CallRaw(context.Context, string, json.RawMessage) (json.RawMessage, error) {
	return nil, errors.New("a test feed forwards no call")
}

func (f testFeed) State() client.State         { return client.StateConnected }
func (f testFeed) Events() <-chan client.Event { return nil }
func (f testFeed) Close() error                { return nil }
func (f testFeed) Stale(string) bool           { return false }
func (f testFeed) Silent(string) bool          { return false }
func (f testFeed) Resync(string) bool          { return false }

// feed is f as a source gives its feed to the hub.
func (f testFeed) feed(context.Context) (client.Holder, error) { return f, nil }

// oneByOne makes a testFeed of a function subscribing one topic.
func oneByOne(subscribe func(ctx context.Context, topic string) (client.Stream, error)) testFeed {
	return func(ctx context.Context, topics []*protocol.Topic) ([]client.Stream, []error, error) {
		feeds, errs := make([]client.Stream, len(topics)), make([]error, len(topics))
		for i, topic := range topics {
			feeds[i], errs[i] = subscribe(ctx, topic.Name)
		}
		return feeds, errs, nil
	}
}
