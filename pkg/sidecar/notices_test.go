package sidecar_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// Thalex's "reconnect soon" notice is the sidecar's business: its upstream
// client subscribes the system channel and reconnects early, while a
// program behind the sidecar, which subscribes system too (the SDK's
// default), is acknowledged by the sidecar itself, is never told to
// reconnect, and keeps its connection and its topics.
func TestReconnectNoticeStaysUpstream(t *testing.T) {
	r := newRig(t, thalex.Name, nil)
	ctx := testutil.Context(t)
	local, err := client.Dial(ctx, r.wsURL(), client.WithProtocol(thalex.Protocol()))
	require.NoError(t, err)
	defer func() { _ = local.Close() }()
	sub, err := local.Subscribe(ctx, []string{"ticker.BTC-PERPETUAL.raw"})
	require.NoError(t, err)
	assert.Equal(t, 1, r.up.Subscribers("system"), "only the sidecar's upstream connection holds system")

	require.Equal(t, 1, r.up.SendReconnectNotice())
	waitFor(t, "the upstream reconnected", func() bool { return r.sc.Status().Upstream.Reconnects == 1 && r.sc.Ready() })
	require.NoError(t, r.up.WaitSubscribers(ctx, "ticker.BTC-PERPETUAL.raw", 1))
	r.up.Publish("ticker.BTC-PERPETUAL.raw", []byte(`{"n":1}`))
	select {
	case m := <-sub.C():
		assert.JSONEq(t, `{"n":1}`, string(m.Data))
	case <-ctx.Done():
		t.Fatal("no message after the upstream reconnect")
	}
	for {
		select {
		case ev := <-local.Events():
			assert.NotEqual(t, client.ServerNotice, ev.Kind, "the program was told to reconnect")
			assert.NotEqual(t, client.Disconnected, ev.Kind, "the program lost its connection")
			continue
		default:
		}
		break
	}
	assert.Equal(t, client.StateConnected, local.State())
}
