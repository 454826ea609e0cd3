package client_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// A leg is Waiting while a call on its connection waits for its answer,
// and not once the answer came: a standby's trailing leg does not hold
// its reads back then (pkg/standby trail.go).
func TestLegWaitingWhileACallWaits(t *testing.T) {
	srv := newServer(t, thalex.Name)
	srv.Handle("slow", func(json.RawMessage) (any, *protocol.Error) { return "late", nil })
	c := dial(t, srv, dialects[0].proto())
	leg := client.LegOf(c)
	assert.False(t, leg.Waiting())

	srv.SetResponseDelay(2 * time.Second)
	errc := make(chan error, 1)
	go func() { errc <- c.Call(testutil.Context(t), "slow", nil, nil) }()
	require.Eventually(t, func() bool { return srv.CountReceived("slow") == 1 }, 5*time.Second, time.Millisecond)
	assert.True(t, leg.Waiting(), "the call waits for its answer")
	require.NoError(t, <-errc)
	assert.False(t, leg.Waiting(), "answered")
}
