package sidecar_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// An upstream reconnect is told to every program that asked: a raw
// WebSocket client that opted in (header or query) gets a wsfan/gap
// notice naming the topic and the cause right before the first message
// after it, the SDK through the sidecar sees that message flagged
// Reconnected as it would directly, and a client that did not ask gets
// the venue's frames alone (TestUpstreamRestartIsInvisible).
func TestGapNoticeAfterUpstreamReconnect(t *testing.T) {
	for _, dc := range dialects {
		t.Run(dc.name, func(t *testing.T) {
			r := newRig(t, dc.d, nil)
			ctx := testutil.Context(t)
			byHeader := r.dialWith(t, "", http.Header{protocol.NotifyHeader: {protocol.NotifyGaps}})
			byQuery := r.dialWith(t, "?notify=gaps", nil)
			localID := subscribeAll(t, dc, byHeader, byQuery)

			proto, err := protocol.ByName(dc.d.String())
			require.NoError(t, err)
			sdk, err := client.Dial(ctx, r.wsURL(), client.WithProtocol(proto))
			require.NoError(t, err)
			defer func() { _ = sdk.Close() }()
			sub, err := sdk.Subscribe(ctx, []string{dc.topic})
			require.NoError(t, err)
			r.waitClients(t, 3, 1)
			require.NoError(t, r.up.WaitSubscribers(ctx, dc.topic, 1))

			r.up.Stop()
			require.NoError(t, r.up.Start())
			require.NoError(t, r.up.WaitSubscribers(ctx, dc.topic, 1))
			r.up.Publish(dc.topic, []byte(payload(1)))

			for _, ws := range []*websocket.Conn{byHeader, byQuery} {
				n, ok := protocol.ParseGapNotice([]byte(testutil.Recv(t, ws)))
				require.True(t, ok, "a gap notice first")
				assert.Equal(t, protocol.GapNotice{Channel: dc.topic, Subscription: localID, Cause: protocol.GapReconnected}, n)
				expectFrame(t, dc, ws, localID, 1)
			}
			select {
			case m := <-sub.C():
				assert.True(t, m.Reconnected(), "the SDK behind the sidecar is told, as it would be directly")
				assert.Contains(t, string(m.Data), strings.Trim(payload(1), "{}"))
			case <-ctx.Done():
				t.Fatal("no message after the upstream reconnect")
			}
		})
	}
}
