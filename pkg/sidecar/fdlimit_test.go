package sidecar

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/wsfan/wsfan/pkg/thalex"
)

// A -max-clients the open-file limit cannot hold is warned about at start.
func TestMaxClientsOverTheDescriptorLimit(t *testing.T) {
	limit := descriptorLimit()
	if limit == 0 || limit > math.MaxInt32 {
		t.Skipf("open-file limit %d: not one a client count can exceed here", limit)
	}
	core, logs := observer.New(zap.WarnLevel)
	srv, err := New(Config{Upstream: "ws://127.0.0.1:1/ws", Protocol: thalex.Name, MaxClients: int(limit), Logger: zap.New(core)})
	require.NoError(t, err)
	srv.Close()
	assert.Equal(t, 1, logs.FilterMessageSnippet("open-file limit").Len())
}
