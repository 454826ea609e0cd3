package sidecar_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/ethereal"
	"github.com/wsfan/wsfan/pkg/ethereum"
	"github.com/wsfan/wsfan/pkg/thalex"
)

func payload(i int) string { return fmt.Sprintf(`{"s":"BTCUSD","seq":%d}`, i) }

// subscribeAll subscribes every client to dc.topic and returns the local
// subscription id (Ethereum) after checking each acknowledgement.
func subscribeAll(t *testing.T, dc dialectCase, clients ...*websocket.Conn) string {
	t.Helper()
	var localID string
	for i, ws := range clients {
		id := 10 + i
		testutil.Send(t, ws, dc.subscribe(id, dc.topic))
		if dc.d == ethereal.Name {
			require.Equal(t, `{"ok":true}`, testutil.Recv(t, ws)) // a status, without an id
			continue
		}
		ack := testutil.RecvJSON(t, ws)
		require.EqualValues(t, float64(id), ack["id"].(float64))
		_, hasVersion := ack["jsonrpc"]
		require.EqualValues(t, dc.d != thalex.Name, hasVersion)
		switch dc.d {
		case ethereum.Name:
			got := ack["result"].(string)
			if localID != "" {
				require.EqualValues(t, localID, got) // one id for every local subscriber
			}
			localID = got
		default:
			require.EqualValues(t, fmt.Sprint([]any{dc.topic}), fmt.Sprint(ack["result"]))
		}
	}
	return localID
}

// expectFrame reads one notification and checks it is frame i.
func expectFrame(t *testing.T, dc dialectCase, ws *websocket.Conn, localID string, i int) {
	t.Helper()
	got := testutil.Recv(t, ws)
	if dc.d == ethereal.Name {
		if !strings.HasPrefix(got, `{"e":"L2Book"`) || !strings.Contains(got, `"data":`+payload(i)) {
			t.Fatalf("frame %d: got %s", i, got)
		}
		return
	}
	require.EqualValues(t, dc.frame(dc.topic, localID, payload(i)), got)
}

// Two local clients on one topic make one upstream subscription, both get
// every frame, and the last unsubscribe makes one upstream unsubscribe
// after the grace period.
func TestFanOutSharesOneUpstreamSubscription(t *testing.T) {
	for _, dc := range dialects {
		t.Run(dc.name, func(t *testing.T) {
			r := newRig(t, dc.d, nil)
			a, b := r.dial(t), r.dial(t)
			localID := subscribeAll(t, dc, a, b)
			r.waitClients(t, 2, 1)
			require.NoError(t, r.up.WaitSubscribers(testutil.Context(t), dc.topic, 1))
			require.EqualValues(t, 1, r.up.CountSubscribes(dc.topic))

			const n = 200
			for i := range n {
				r.up.Publish(dc.topic, []byte(payload(i)))
			}
			for _, ws := range []*websocket.Conn{a, b} {
				for i := range n {
					expectFrame(t, dc, ws, localID, i)
				}
			}

			testutil.Send(t, a, dc.unsub(20, dc.topic, localID))
			if dc.rpc {
				ack := testutil.RecvJSON(t, a)
				require.EqualValues(t, float64(20), ack["id"].(float64))
			}
			r.waitClients(t, 1, 1)
			require.EqualValues(t, 0, r.up.CountReceived(dc.unsMethod)) // b still holds it

			testutil.Send(t, b, dc.unsub(21, dc.topic, localID))
			require.NoError(t, r.up.WaitReceived(testutil.Context(t), dc.unsMethod, 1))
			waitFor(t, "topic closed", func() bool { return len(r.sc.Status().Topics) == 0 })
			require.EqualValues(t, 1, r.up.CountReceived(dc.unsMethod))
			require.EqualValues(t, 1, r.up.CountSubscribes(dc.topic))
		})
	}
}

// A subscriber returning within the grace period keeps the upstream
// subscription: no unsubscribe, no second subscribe.
func TestGracePeriodKeepsUpstream(t *testing.T) {
	dc := dialects[0]
	r := newRig(t, dc.d, func(c *sidecarConfig) { c.Grace = time10s })
	a := r.dial(t)
	subscribeAll(t, dc, a)
	r.waitClients(t, 1, 1)
	require.NoError(t, a.Close())
	waitFor(t, "client gone", func() bool { return len(r.sc.Status().Clients) == 0 })
	st := r.sc.Status()
	require.EqualValues(t, 1, len(st.Topics))
	require.EqualValues(t, 0, st.Topics[0].Refs)

	b := r.dial(t)
	subscribeAll(t, dc, b)
	r.waitClients(t, 1, 1)
	r.up.Publish(dc.topic, []byte(payload(1)))
	expectFrame(t, dc, b, "", 1)
	require.EqualValues(t, 1, r.up.CountSubscribes(dc.topic))
	require.EqualValues(t, 0, r.up.CountReceived(dc.unsMethod))
}
