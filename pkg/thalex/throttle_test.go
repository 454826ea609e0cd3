package thalex_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// Errors 4 (throttle, thalex_py) and 3 (too many pending requests, a
// third-party SDK's table) refuse a request for its pace: the client
// sends it again later. Other codes refuse what the request asks.
func TestThrottledCodes(t *testing.T) {
	p, ok := thalex.Protocol().(protocol.Throttling)
	require.True(t, ok)
	assert.True(t, p.Throttled(4), "throttle exceeded")
	assert.True(t, p.Throttled(3), "too many pending requests")
	for _, code := range []int{0, 1, 2, 5, 8, 53, -32600} {
		assert.False(t, p.Throttled(code), "code %d", code)
	}
}
