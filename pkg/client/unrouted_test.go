package client_test

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// Frames a server still sends for a topic just unsubscribed (in flight
// before it read the unsubscribe) are dropped quietly: counted, not
// logged as a warning. A frame for a topic never held is still logged.
func TestFramesOfATopicJustLeftAreNotWarnedAbout(t *testing.T) {
	srv := newServer(t, thalex.Name)
	core, logs := observer.New(zap.WarnLevel)
	reg := prometheus.NewRegistry()
	c := dial(t, srv, dialects[0].proto(), client.WithLogger(zap.New(core)), client.WithMetrics(reg, "x"))
	ctx := testutil.Context(t)
	sub, err := c.Subscribe(ctx, []string{"ticker.LEFT.raw"})
	require.NoError(t, err)
	require.NoError(t, sub.Unsubscribe(ctx))

	srv.PublishRaw([]byte(`{"channel_name":"ticker.LEFT.raw","notification":{"n":1}}`))
	srv.PublishRaw([]byte(`{"channel_name":"ticker.NEVER.raw","notification":{"n":1}}`))
	require.Eventually(t, func() bool { return counterValue(t, reg, "wsfan_client_dropped_total", "unrouted") == 2 },
		testutil.Timeout, 5*time.Millisecond, "both counted")
	warned := logs.FilterMessage("dropped frame").All()
	require.Len(t, warned, 1, "only the topic never held is warned about")
	assert.Contains(t, warned[0].ContextMap()["sample"], "ticker.NEVER.raw")
}
