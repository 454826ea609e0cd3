package ethereal_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/pkg/ethereal"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// The client keeps Ethereal's WebSocket budget by default: 3,500 points
// per 5 minutes
// (https://docs.ethereal.trade/developer-guides/trading-api/system-limits),
// a subscribe request taken to cost 1 point (the cost table could not be
// read), an unsubscribe nothing.
func TestProtocolPacesSubscribes(t *testing.T) {
	limits := ethereal.Protocol().Venue().Limits
	require.Len(t, limits, 1)
	l := limits[0]
	assert.Equal(t, 3500, l.Burst)
	assert.InDelta(t, 3500.0/300, l.Rate, 1e-9)
	assert.Equal(t, 1, l.Cost(protocol.SubscribeMethod))
	assert.Equal(t, 0, l.Cost(protocol.UnsubscribeMethod))
}
