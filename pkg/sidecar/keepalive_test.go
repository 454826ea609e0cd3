package sidecar_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/protocol/protocoltest"
)

// A venue with an application keepalive (a text "ping" answered "pong")
// works behind the sidecar unchanged: its upstream client keeps the
// upstream, which closes silent clients, alive, and a local program's
// own "ping" is answered "pong" as the venue answers it.
func TestApplicationKeepaliveBehindTheSidecar(t *testing.T) {
	protocoltest.RegisterPingDialect()
	r := newRig(t, exchangetest.Dialect(protocoltest.PingDialect), nil)
	ws := r.dial(t)
	testutil.Send(t, ws, "ping")
	assert.Equal(t, "pong", testutil.Recv(t, ws))

	time.Sleep(3 * protocoltest.PingIdleLimit)
	assert.True(t, r.sc.Ready(), "the upstream kept alive")
	assert.Zero(t, r.sc.Status().Upstream.Reconnects, "never closed for silence")

	testutil.Send(t, ws, `{"jsonrpc":"2.0","id":1,"method":"public/subscribe","params":{"channels":["ticker.A.raw"]}}`)
	testutil.RecvJSON(t, ws)
	require.NoError(t, r.up.WaitSubscribers(testutil.Context(t), "ticker.A.raw", 1))
	r.up.Publish("ticker.A.raw", []byte(`{"n":1}`))
	assert.JSONEq(t, `{"channel_name":"ticker.A.raw","notification":{"n":1}}`, testutil.Recv(t, ws))
}
