package client_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/client"
)

// A topic that goes silent while another of the connection keeps
// flowing is found stale: a Stale event, one resubscribe, and its next
// message flagged FlagStale. The topic that flows is never judged.
func TestSilentTopicIsResubscribed(t *testing.T) {
	d := dialects[0]
	srv := newServer(t, d.server)
	c := dial(t, srv, d.proto(), client.WithStaleAfter(10, 300*time.Millisecond))
	ctx := testutil.Context(t)
	quiet, busy := d.topics[0], d.topics[1]
	qs, err := c.Subscribe(ctx, []string{quiet})
	require.NoError(t, err)
	bs, err := c.Subscribe(ctx, []string{busy})
	require.NoError(t, err)

	// Both set a rhythm of about 10ms: 40 messages each, of which the
	// rhythm records one every 15ms (the floor over twice the factor),
	// more than the 17 a median needs.
	for i := range 40 {
		srv.Publish(quiet, payload(d.name, quiet, i))
		srv.Publish(busy, payload(d.name, busy, i))
		time.Sleep(10 * time.Millisecond)
	}
	// Then only busy flows, until the quiet one is judged.
	flowCtx, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		for i := 20; flowCtx.Err() == nil; i++ {
			srv.Publish(busy, payload(d.name, busy, i))
			time.Sleep(10 * time.Millisecond)
		}
	}()
	ev := waitEvent(t, c, client.Stale)
	assert.Equal(t, quiet, ev.Topic)
	assert.True(t, c.Stale(quiet))
	assert.False(t, c.Stale(busy))
	require.Eventually(t, func() bool { return srv.CountSubscribes(quiet) == 2 }, 5*time.Second, 10*time.Millisecond,
		"resubscribed once")
	stop()
	assert.EqualValues(t, 1, srv.CountSubscribes(busy), "the flowing topic is left alone")

	for range 40 { // what arrived before the silence
		require.False(t, receive(t, qs).Stale())
	}
	srv.Publish(quiet, payload(d.name, quiet, 99))
	assert.True(t, receive(t, qs).Stale(), "the next message says the topic was stale")
	assert.False(t, c.Stale(quiet), "no longer silent")
	for len(bs.C()) > 0 {
		assert.False(t, receive(t, bs).Stale())
	}
}
