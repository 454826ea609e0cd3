package pool_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/pool"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// poolTopics are n distinct ticker topics.
func poolTopics(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("ticker.I%03d-PERPETUAL.raw", i)
	}
	return out
}

func dialPool(t *testing.T, srv *exchangetest.Server, perConnection int, opts ...client.Option) *pool.Pool {
	t.Helper()
	opts = append([]client.Option{client.WithProtocol(thalex.Protocol(thalex.WithNotices(false))), fastBackoff()}, opts...)
	p, err := pool.Dial(testutil.Context(t), srv.URL(), perConnection, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// subscribeFrames returns the topics of every subscribe request the
// server received, one slice per frame.
func subscribeFrames(t *testing.T, srv *exchangetest.Server) [][]string {
	t.Helper()
	var frames [][]string
	for _, r := range srv.Received() {
		var req struct {
			Method string `json:"method"`
			Params struct {
				Channels []string `json:"channels"`
			} `json:"params"`
		}
		if json.Unmarshal(r.Data, &req) == nil && req.Method == "public/subscribe" {
			frames = append(frames, req.Params.Channels)
		}
	}
	return frames
}

// 250 topics on a server that caps a connection at 100 take three
// connections; dropping one restores its topics, and only them, in one
// frame, while the other connections carry on.
func TestPoolSpreadsTopicsOverConnections(t *testing.T) {
	srv := newServer(t, thalex.Name, exchangetest.WithTopicCap(100))
	p := dialPool(t, srv, 100)
	ctx := testutil.Context(t)
	topics := poolTopics(250)
	var subs []*client.Subscription
	for i := 0; i < len(topics); i += 50 {
		sub, err := p.Subscribe(ctx, topics[i:i+50])
		require.NoError(t, err)
		subs = append(subs, sub)
	}
	assert.Equal(t, 3, p.Connections())
	require.NoError(t, srv.WaitConnections(ctx, 3))
	for _, topic := range topics {
		assert.Equal(t, 1, srv.Subscribers(topic), topic)
	}

	srv.ResetReceived()
	require.True(t, srv.DropConnectionOf(topics[120]))
	require.NoError(t, srv.WaitConnections(ctx, 3))
	require.Eventually(t, func() bool { return len(subscribeFrames(t, srv)) > 0 && srv.Subscribers(topics[120]) == 1 },
		10*time.Second, time.Millisecond)
	frames := subscribeFrames(t, srv)
	require.Len(t, frames, 1, "one frame restores the dropped connection")
	assert.Len(t, frames[0], 100, "its topics, and only them")
	assert.Contains(t, frames[0], topics[120])

	// Every subscription still gets its topics, on whichever connection.
	for i, sub := range subs {
		topic := topics[i*50+49]
		srv.Publish(topic, payload(1))
		m := receive(t, sub)
		assert.Equal(t, topic, m.Topic)
	}
}

// A subscription whose topics span connections delivers from all of
// them, each topic in order, with Seq counting across them, and its
// Unsubscribe leaves every connection.
func TestPoolSubscriptionSpanningConnections(t *testing.T) {
	srv := newServer(t, thalex.Name, exchangetest.WithTopicCap(2))
	p := dialPool(t, srv, 2)
	ctx := testutil.Context(t)
	topics := poolTopics(5)
	sub, err := p.Subscribe(ctx, topics)
	require.NoError(t, err)
	assert.Equal(t, 3, p.Connections())

	for n := 1; n <= 3; n++ {
		for _, topic := range topics {
			srv.Publish(topic, payload(n))
		}
	}
	last := make(map[string]int)
	var seq uint64
	for range 3 * len(topics) {
		m := receive(t, sub)
		var v struct{ N int }
		require.NoError(t, json.Unmarshal(m.Data, &v))
		assert.Equal(t, last[m.Topic]+1, v.N, "%s in order", m.Topic)
		last[m.Topic] = v.N
		assert.Equal(t, seq+1, m.Seq, "Seq counts across connections")
		seq = m.Seq
	}

	require.NoError(t, sub.Unsubscribe(ctx))
	for _, topic := range topics {
		require.NoError(t, srv.WaitSubscribers(ctx, topic, 0), topic)
	}
	_, open := <-sub.C()
	assert.False(t, open)
}

// A topic a connection already holds is shared there, not subscribed
// again on another connection.
func TestPoolSharesAHeldTopic(t *testing.T) {
	srv := newServer(t, thalex.Name, exchangetest.WithTopicCap(2))
	p := dialPool(t, srv, 2)
	ctx := testutil.Context(t)
	topics := poolTopics(3)
	a, err := p.Subscribe(ctx, topics[:2])
	require.NoError(t, err)
	b, err := p.Subscribe(ctx, topics[1:2])
	require.NoError(t, err)
	assert.Equal(t, 1, p.Connections(), "the held topic stays where it is")
	assert.Equal(t, 1, srv.Subscribers(topics[1]))
	srv.Publish(topics[1], payload(1))
	assert.Equal(t, topics[1], receive(t, a).Topic)
	assert.Equal(t, topics[1], receive(t, b).Topic)

	_, err = p.Subscribe(ctx, topics[2:])
	require.NoError(t, err)
	assert.Equal(t, 2, p.Connections(), "a new topic past the cap opens a connection")
}

// When one connection ends its part of a spanning subscription (here a
// topic refused on restore), the whole subscription ends with that error
// and leaves the other connections.
func TestPoolSpanningSubscriptionEndsTogether(t *testing.T) {
	srv := newServer(t, thalex.Name, exchangetest.WithTopicCap(1))
	p := dialPool(t, srv, 1)
	ctx := testutil.Context(t)
	topics := poolTopics(2)
	sub, err := p.Subscribe(ctx, topics)
	require.NoError(t, err)
	require.Equal(t, 2, p.Connections())

	// The server now refuses the first topic: its connection's restore
	// fails.
	srv.Stop()
	srv.SetRefused(topics[0])
	require.NoError(t, srv.Start())
	select {
	case err := <-sub.Err():
		require.ErrorIs(t, err, client.ErrRefused)
	case <-ctx.Done():
		t.Fatal("the spanning subscription did not end")
	}
	require.NoError(t, srv.WaitSubscribers(ctx, topics[1], 0), "the other connection left its topic")
}

// Events of every connection arrive on the pool's channel, marked with
// their connection; Close ends every connection and closes it.
func TestPoolEventsAndClose(t *testing.T) {
	srv := newServer(t, thalex.Name)
	p := dialPool(t, srv, 1)
	ctx := testutil.Context(t)
	_, err := p.Subscribe(ctx, poolTopics(2))
	require.NoError(t, err)
	require.Equal(t, 2, p.Connections())
	assert.Equal(t, client.StateConnected, p.State())

	srv.DropConnections()
	seen := make(map[int]bool)
	for len(seen) < 2 {
		select {
		case ev := <-p.Events():
			if ev.Kind == client.Resubscribed {
				seen[ev.Connection] = true
			}
		case <-ctx.Done():
			t.Fatalf("resubscribed connections: %v", seen)
		}
	}
	assert.Equal(t, map[int]bool{0: true, 1: true}, seen)

	require.NoError(t, p.Close())
	for range p.Events() {
	}
	require.NoError(t, srv.WaitConnections(context.Background(), 0))
}
