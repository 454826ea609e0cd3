package kraken_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/pkg/kraken"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// The client paces new connections to a Kraken host so that no 10
// minutes, however aligned, hold more than the 150 Cloudflare allows an
// IP: the bucket's burst plus its refill over 10 minutes; and the pace
// charges connections only, never a request.
func TestConnectionsArePacedUnderCloudflaresLimit(t *testing.T) {
	limits := kraken.Protocol().Venue().Limits
	require.Len(t, limits, 1)
	l := limits[0]
	assert.LessOrEqual(t, float64(l.Burst)+l.Rate*600, 150.0)
	assert.Equal(t, 1, l.Cost(protocol.ConnectMethod))
	for _, m := range []string{protocol.SubscribeMethod, protocol.UnsubscribeMethod, "add_order", "ping"} {
		assert.Zero(t, l.Cost(m), m)
	}
}
