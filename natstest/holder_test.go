package natstest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// A group member is a client.Holder, as the sidecar holds it: its
// streams deliver the group's topics, its state is the leader's report
// of the group's upstream, it neither resyncs nor finds a topic stale,
// and Close closes its Events.
func TestMemberIsAHolder(t *testing.T) {
	ns := startNATS(t)
	ex := exchange(t)
	topics := startFeed(ex, 20*time.Millisecond)
	var h client.Holder = join(t, connect(t, ns.url()), "g1", "m0", ex)
	ctx := context.Background()

	parsed, err := thalex.Protocol().NewTopic(topics[0])
	require.NoError(t, err)
	streams, errs, err := h.SubscribeTopics(ctx, []*protocol.Topic{parsed})
	require.NoError(t, err)
	require.NoError(t, errs[0])
	select {
	case m, ok := <-streams[0].C():
		require.True(t, ok, "stream ended")
		assert.Equal(t, topics[0], m.Topic)
	case <-time.After(10 * time.Second):
		t.Fatal("no message within 10s")
	}
	require.Eventually(t, func() bool { return h.State() == client.StateConnected },
		10*time.Second, 5*time.Millisecond, "the leader's report of its upstream")
	assert.False(t, h.Stale(topics[0]))
	assert.False(t, h.Resync(topics[0]))
	require.NoError(t, h.UnsubscribeStreams(ctx, streams))

	require.NoError(t, h.Close())
	_, open := <-h.Events()
	assert.False(t, open, "Close closes Events")
}
