package client_test

import (
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
