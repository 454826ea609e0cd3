package sidecar_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/ethereal"
)

// Ethereal's answers carry no id, so a program matches them to its events
// by their order: the sidecar answers a malformed event, and a frame that
// is not JSON, only after the subscribe sent before them, even while the
// upstream is slow to answer that subscribe.
func TestEtherealAnswersKeepTheirOrder(t *testing.T) {
	r := newRig(t, ethereal.Name, nil)
	r.up.SetResponseDelay(300 * time.Millisecond)
	ws := r.dial(t)
	testutil.Send(t, ws, `{"event":"subscribe","data":{"type":"L2Book","symbol":"BTCUSD"}}`)
	testutil.Send(t, ws, `{"event":"subscribe","data":{"type":"L2Book"}}`)
	testutil.Send(t, ws, `not json`)
	require.Equal(t, `{"ok":true}`, testutil.Recv(t, ws))
	require.JSONEq(t, `{"ok":false,"code":"INVALID_REQUEST","message":"invalid params: want {\"type\":T,\"symbol\":S} or {\"type\":T,\"subaccountId\":ID}"}`, testutil.Recv(t, ws))
	require.JSONEq(t, `{"ok":false,"code":"INVALID_REQUEST","message":"parse error"}`, testutil.Recv(t, ws))
}
