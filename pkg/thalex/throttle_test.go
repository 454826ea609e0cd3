package thalex_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/pkg/thalex"
)

// Errors 4 (throttle, thalex_py) and 3 (too many pending requests, a
// third-party SDK's table) refuse a request for its pace: the client
// sends it again later. Other codes refuse what the request asks.
func TestThrottledCodes(t *testing.T) {
	errs := thalex.Protocol().Venue().Errors
	require.NotNil(t, errs)
	assert.True(t, errs.ClassifyError(4, "").Throttled, "throttle exceeded")
	assert.True(t, errs.ClassifyError(3, "").Throttled, "too many pending requests")
	for _, code := range []int{0, 1, 2, 5, 8, 53, -32600} {
		assert.False(t, errs.ClassifyError(code, "").Throttled, "code %d", code)
	}
}
