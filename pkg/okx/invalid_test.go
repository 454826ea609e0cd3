package okx_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/pkg/okx"
)

// A frame that is not an OKX request is refused with 60012 quoting it,
// as OKX does, but a megabyte of it is quoted only in part: the answer
// stays small whatever a client sends.
func TestInvalidRequestQuotesABoundedFrame(t *testing.T) {
	srv := okx.Server()
	reqs, _, err := srv.ParseFrame(nil, []byte(`{"op":"subscribe"}`))
	require.Nil(t, err)
	require.Len(t, reqs, 1)
	require.NotNil(t, reqs[0].Err)
	assert.Contains(t, reqs[0].Err.Message, `Invalid request: {"op":"subscribe"}`, "a short frame is quoted whole")

	huge := `{"op":"subscribe","x":"` + strings.Repeat("a", 1<<20) + `"}`
	reqs, _, err = srv.ParseFrame(nil, []byte(huge))
	require.Nil(t, err)
	require.Len(t, reqs, 1)
	require.NotNil(t, reqs[0].Err)
	assert.Less(t, len(reqs[0].Err.Message), 1024)
	assert.Contains(t, reqs[0].Err.Message, fmt.Sprintf("(%d bytes)", len(huge)))
}
