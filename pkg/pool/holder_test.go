package pool_test

import (
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

// A Pool is a client.Holder: SubscribeTopics places the topics as
// Subscribe does, over as many connections as the cap needs, a stream
// each delivering its own topic; a topic's health and resync are asked
// of the connection holding it; UnsubscribeStreams leaves every
// connection.
func TestPoolIsAHolder(t *testing.T) {
	srv := newServer(t, thalex.Name, exchangetest.WithTopicCap(2))
	p := dialPool(t, srv, 2)
	var h client.Holder = p
	ctx := testutil.Context(t)
	topics := poolTopics(5)
	var err error
	parsed := make([]*protocol.Topic, len(topics))
	for i, name := range topics {
		parsed[i], err = thalex.Protocol().NewTopic(name)
		require.NoError(t, err)
	}
	streams, errs, err := h.SubscribeTopics(ctx, parsed)
	require.NoError(t, err)
	assert.Equal(t, 3, p.Connections())
	for i, topic := range topics {
		require.NoError(t, errs[i], topic)
		require.NoError(t, srv.WaitSubscribers(ctx, topic, 1), topic)
		srv.Publish(topic, payload(i))
		m := receive(t, streams[i].(*client.Subscription))
		assert.Equal(t, topic, m.Topic, "stream %d carries its own topic", i)
	}

	assert.True(t, h.Resync(topics[4]), "the connection holding it resubscribes it")
	// The resync's subscribe is on its way; the unsubscribe below waits
	// for it (a resync racing an unsubscribe is not what this test is of).
	require.Eventually(t, func() bool { return srv.CountSubscribes(topics[4]) >= 2 }, 10*time.Second, 5*time.Millisecond)
	assert.False(t, h.Resync("ticker.NONE-PERPETUAL.raw"), "no connection holds it")
	assert.False(t, h.Stale(topics[0]))
	assert.False(t, h.Silent(topics[0]))

	require.NoError(t, h.UnsubscribeStreams(ctx, streams))
	for _, topic := range topics {
		require.NoError(t, srv.WaitSubscribers(ctx, topic, 0), topic)
	}
	assert.False(t, h.Resync(topics[4]), "held no more")
}
