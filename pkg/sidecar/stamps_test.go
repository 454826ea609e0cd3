package sidecar_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/deribit"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// TestStampsThroughTheSidecar: programs behind the sidecar that asked
// for stamps (a WebSocket client with notify=stamps, the SDK under
// WithStamps) read, for each message, the venue's stamp and the
// sidecar's receive time, the same for both; a client that did not ask
// gets the venue's frame as it was.
func TestStampsThroughTheSidecar(t *testing.T) {
	dc := dialects[1]
	require.Equal(t, deribit.Name, dc.d.String())
	r := newRig(t, dc.d, nil)
	ctx := testutil.Context(t)
	stamped := r.dialWith(t, "?notify=stamps", nil)
	plain := r.dialWith(t, "", nil)
	localID := subscribeAll(t, dc, stamped, plain)

	sdk, err := client.Dial(ctx, r.wsURL(), client.WithProtocol(deribit.Protocol(deribit.WithHeartbeat(0))), client.WithStamps())
	require.NoError(t, err)
	defer func() { _ = sdk.Close() }()
	sub, err := sdk.Subscribe(ctx, []string{dc.topic})
	require.NoError(t, err)
	r.waitClients(t, 3, 1)

	for i := range 3 {
		venue := time.UnixMilli(1737043200123 + int64(i))
		data := fmt.Sprintf(`{"timestamp":%d,"i":%d}`, venue.UnixMilli(), i)
		r.up.Publish(dc.topic, []byte(data))

		frame := []byte(testutil.Recv(t, stamped))
		cut, st, ok := protocol.CutStamps(frame)
		require.True(t, ok, "no stamps in %s", frame)
		require.Equal(t, venue.UnixNano(), st.Venue)
		require.NotZero(t, st.Recv)
		require.GreaterOrEqual(t, st.Send, st.Recv)
		require.JSONEq(t, dc.frame(dc.topic, localID, data), string(append(frame[:cut:cut], '}')))

		require.JSONEq(t, dc.frame(dc.topic, localID, data), testutil.Recv(t, plain), "a client that did not ask gets the venue's frame")

		select {
		case m := <-sub.C():
			require.Equal(t, venue, m.ExchangeTime)
			require.Equal(t, time.Unix(0, st.Recv), m.UpstreamRecvTime, "the sidecar's receive time, as the WebSocket client read it")
			require.JSONEq(t, data, string(m.Data))
		case <-ctx.Done():
			t.Fatal("the SDK got nothing")
		}
	}
}
