package client_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// A sidecar's notice that it dropped frames of a topic for this client
// (cause "dropped", -overflow drop-newest) flags the topic's next message
// FlagGap, with a Gap event, as a hole upstream does.
func TestDroppedNoticeFlagsAGap(t *testing.T) {
	const topic = "ticker.BTC-PERPETUAL.raw"
	srv := newServer(t, thalex.Name)
	c := dial(t, srv, thalex.Protocol())
	ctx := testutil.Context(t)
	sub, err := c.Subscribe(ctx, []string{topic})
	require.NoError(t, err)
	require.NoError(t, srv.WaitSubscribers(ctx, topic, 1))
	drainEvents(c)
	srv.PublishRaw(protocol.AppendGapNotice(nil, true, protocol.GapNotice{Channel: topic, Cause: protocol.GapDropped}))
	srv.Publish(topic, []byte(`{"n":1}`))
	m := receive(t, sub)
	assert.True(t, m.Gap(), "the message after the notice is flagged")
	waitEvent(t, c, client.Gap)
}
