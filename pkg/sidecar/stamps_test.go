package sidecar_test

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/deribit"
	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/sidecar"
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

// TestSendStampIsTheWrite: send_ns is the time the sidecar wrote the
// frame to the client's socket, not the time it built the frame: a
// client that stops reading until its socket is full, so the sidecar's
// writer waits on it, and that reads on only after hold, gets the message
// published meanwhile (queued behind the writer's batch) with send_ns at
// least hold after its recv_ns; every frame's send_ns is at or after its
// recv_ns, the frames otherwise as the venue sent them.
func TestSendStampIsTheWrite(t *testing.T) {
	dc := dialects[1]
	r := newRig(t, dc.d, func(c *sidecar.Config) {
		c.QueueBytes = 64 << 20
		c.WriteTimeout = 30 * time.Second
	})
	// A receive buffer of 256 KiB, not grown: the socket fills with what
	// the sidecar's send buffer holds (4 MiB at most by default).
	d := websocket.Dialer{NetDialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		nc, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if tc, ok := nc.(*net.TCPConn); ok {
			_ = tc.SetReadBuffer(256 << 10)
		}
		return nc, err
	}}
	ws, resp, err := d.Dial(r.wsURL()+"?notify=stamps", nil)
	require.NoError(t, err)
	_ = resp.Body.Close()
	t.Cleanup(func() { _ = ws.Close() })
	localID := subscribeAll(t, dc, ws)
	r.waitClients(t, 1, 1)

	const fill = 48 // 12 MiB, unread: the writer blocks on the socket
	pad := strings.Repeat("x", 256<<10)
	var sent []string
	for i := range fill {
		sent = append(sent, fmt.Sprintf(`{"i":%d,"pad":"%s"}`, i, pad))
		r.up.Publish(dc.topic, []byte(sent[i]))
	}
	waitFor(t, "the fill queued", func() bool { return r.client(t, ws).Delivered == fill })
	time.Sleep(200 * time.Millisecond) // the writer took its batch and waits for room
	sent = append(sent, `{"i":"last"}`)
	r.up.Publish(dc.topic, []byte(sent[fill]))
	waitFor(t, "the last message queued", func() bool { return r.client(t, ws).Delivered == fill+1 })
	const hold = 300 * time.Millisecond
	time.Sleep(hold)

	for i, data := range sent {
		_ = ws.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, frame, err := ws.ReadMessage()
		require.NoError(t, err)
		cut, st, ok := protocol.CutStamps(frame)
		require.True(t, ok, "frame %d has no stamps", i)
		require.JSONEq(t, dc.frame(dc.topic, localID, data), string(append(frame[:cut:cut], '}')), "frame %d", i)
		require.GreaterOrEqual(t, st.Send, st.Recv, "frame %d", i)
		if i == fill {
			require.GreaterOrEqual(t, time.Duration(st.Send-st.Recv), hold,
				"the message queued behind the blocked writer was stamped when its frame was built, not when written")
		}
	}
}
