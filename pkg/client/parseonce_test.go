package client_test

import (
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// countingDialect is Thalex's dialect counting the topics it parses.
type countingDialect struct {
	protocol.Protocol
	parsed *atomic.Int64
}

func (d countingDialect) NewTopic(name string) (*protocol.Topic, error) {
	d.parsed.Add(1)
	return d.Protocol.NewTopic(name)
}

// A topic is parsed once on its way to the upstream request, by
// SubscribeEach and by SubscribeStreams (what the sidecar's hub calls):
// SubscribeStreams parsed and clash-checked each topic, then handed the
// names to SubscribeEach, which parsed and checked them again.
func TestSubscribeParsesEachTopicOnce(t *testing.T) {
	srv := newServer(t, thalex.Name)
	var parsed atomic.Int64
	c := dial(t, srv, countingDialect{Protocol: thalex.Protocol(thalex.WithNotices(false)), parsed: &parsed})
	ctx := testutil.Context(t)
	topics := []string{"ticker.A-PERPETUAL.raw", "ticker.B-PERPETUAL.raw", "ticker.C-PERPETUAL.raw"}

	subs, errs, err := c.SubscribeEach(ctx, topics[:2])
	require.NoError(t, err)
	require.Len(t, subs, 2)
	for _, e := range errs {
		require.NoError(t, e)
	}
	assert.Equal(t, int64(2), parsed.Load(), "SubscribeEach: one NewTopic a topic")

	parsed.Store(0)
	streams, errs, err := c.SubscribeStreams(ctx, topics[2:])
	require.NoError(t, err)
	require.NoError(t, errs[0])
	require.NotNil(t, streams[0])
	assert.Equal(t, int64(1), parsed.Load(), "SubscribeStreams: one NewTopic a topic")
}
