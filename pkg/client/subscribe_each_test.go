package client_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/deribit"
)

// SubscribeEach makes one subscription a topic in one request: a refused
// topic fails its own subscription only, and each subscription gets its
// own topic's messages.
func TestSubscribeEachOneRequestOneSubscriptionATopic(t *testing.T) {
	srv := newServer(t, deribit.Name)
	srv.SetRefused("ticker.REFUSED.100ms")
	c := dial(t, srv, deribit.Protocol())
	topics := []string{"ticker.A.100ms", "ticker.REFUSED.100ms", "ticker.B.100ms"}
	subs, errs, err := c.SubscribeEach(testutil.Context(t), topics)
	require.NoError(t, err)
	require.Len(t, subs, 3)
	assert.Equal(t, 1, srv.CountReceived("public/subscribe"), "one request for the three")
	require.NoError(t, errs[0])
	require.NoError(t, errs[2])
	var re *client.RefusedError
	require.ErrorAs(t, errs[1], &re)
	assert.Equal(t, []string{"ticker.REFUSED.100ms"}, re.Topics)
	assert.Nil(t, subs[1])

	require.NoError(t, srv.WaitSubscribers(testutil.Context(t), "ticker.B.100ms", 1))
	srv.Publish("ticker.B.100ms", []byte(`{"b":1}`))
	srv.Publish("ticker.A.100ms", []byte(`{"a":1}`))
	assert.Equal(t, `{"b":1}`, string((<-subs[2].C()).Data))
	assert.Equal(t, `{"a":1}`, string((<-subs[0].C()).Data))
	require.NoError(t, subs[0].Unsubscribe(testutil.Context(t)))
	srv.Publish("ticker.B.100ms", []byte(`{"b":2}`))
	assert.Equal(t, `{"b":2}`, string((<-subs[2].C()).Data), "the other subscriptions stay")
}

// UnsubscribeEach ends many subscriptions in one round: 100 topics leave
// Deribit in one public/unsubscribe, not one a topic (at Deribit's
// subscription budget, 100 requests would end the session); a topic
// another subscription still holds stays subscribed; ended ones are
// skipped and another client's are refused.
func TestUnsubscribeEachOneRequest(t *testing.T) {
	srv := newServer(t, deribit.Name)
	c := dial(t, srv, deribit.Protocol())
	ctx := testutil.Context(t)
	topics := make([]string, 100)
	for i := range topics {
		topics[i] = fmt.Sprintf("ticker.I%d.100ms", i)
	}
	subs, errs, err := c.SubscribeEach(ctx, topics)
	require.NoError(t, err)
	for _, e := range errs {
		require.NoError(t, e)
	}
	kept, err := c.Subscribe(ctx, []string{topics[0]})
	require.NoError(t, err)
	require.NoError(t, subs[1].Unsubscribe(ctx))
	require.Equal(t, 1, srv.CountReceived("public/unsubscribe"))

	require.NoError(t, c.UnsubscribeEach(ctx, subs))
	assert.Equal(t, 2, srv.CountReceived("public/unsubscribe"), "one request for the 98 left")
	for _, s := range subs {
		_, open := <-s.C()
		assert.False(t, open)
	}
	require.NoError(t, srv.WaitSubscribers(ctx, topics[2], 0))
	assert.Equal(t, 1, srv.Subscribers(topics[0]), "the topic kept elsewhere stays")
	requireOpen(t, kept)

	other := dial(t, srv, deribit.Protocol())
	assert.Error(t, other.UnsubscribeEach(ctx, []*client.Subscription{kept}))
	requireOpen(t, kept)
}

// A Client is a client.Holder: the deprecated SubscribeStreams, the
// Holder's SubscribeTopics by name, refuses a topic the dialect cannot
// express on its own, without failing the others (which go out in one
// request), and UnsubscribeStreams leaves them in one request.
func TestClientIsAFeed(t *testing.T) {
	srv := newServer(t, deribit.Name)
	c := dial(t, srv, deribit.Protocol())
	var feed client.Holder = c
	ctx := testutil.Context(t)
	streams, errs, err := c.SubscribeStreams(ctx, []string{"ticker.A.100ms", "no such channel", "ticker.B.100ms"})
	require.NoError(t, err)
	assert.Equal(t, 1, srv.CountReceived("public/subscribe"))
	require.NoError(t, errs[0])
	require.NoError(t, errs[2])
	assert.ErrorIs(t, errs[1], client.ErrRefused)
	assert.Nil(t, streams[1])

	srv.Publish("ticker.B.100ms", []byte(`{"b":1}`))
	assert.Equal(t, `{"b":1}`, string((<-streams[2].C()).Data))
	require.NoError(t, feed.UnsubscribeStreams(ctx, []client.Stream{streams[0], streams[2]}))
	assert.Equal(t, 1, srv.CountReceived("public/unsubscribe"), "one request for the two")
	require.NoError(t, srv.WaitSubscribers(ctx, "ticker.A.100ms", 0))
	require.NoError(t, srv.WaitSubscribers(ctx, "ticker.B.100ms", 0))
}
