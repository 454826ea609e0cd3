package sidecar_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/testutil"
)

// Two identical eth_subscribe calls on one connection get two ids, as
// geth gives them (go-ethereum's client keys its subscriptions by id):
// each id gets every head, unsubscribing one leaves the other, and the
// upstream holds one subscription throughout. Another connection's first
// subscription shares the first id, as before.
func TestIdenticalEthereumSubscriptionsGetIDsOfTheirOwn(t *testing.T) {
	dc := dialects[2]
	require.Equal(t, "ethereum", dc.name)
	r := newRig(t, dc.d, nil)
	ws := r.dial(t)
	subscribe := func(id int) string {
		t.Helper()
		testutil.Send(t, ws, dc.subscribe(id, "newHeads"))
		ack := testutil.RecvJSON(t, ws)
		sid, _ := ack["result"].(string)
		require.NotEmpty(t, sid, "%v", ack)
		return sid
	}
	first, second := subscribe(1), subscribe(2)
	assert.NotEqual(t, first, second, "two subscriptions, two ids")
	ctx := testutil.Context(t)
	require.NoError(t, r.up.WaitSubscribers(ctx, "newHeads", 1))
	assert.Equal(t, 1, r.up.CountReceived("eth_subscribe"), "one upstream subscription")

	r.up.Publish("newHeads", []byte(`{"number":"0x1"}`))
	got := map[string]bool{}
	for range 2 {
		var n struct {
			Params struct {
				Subscription string          `json:"subscription"`
				Result       json.RawMessage `json:"result"`
			} `json:"params"`
		}
		require.NoError(t, ws.ReadJSON(&n))
		assert.JSONEq(t, `{"number":"0x1"}`, string(n.Params.Result))
		got[n.Params.Subscription] = true
	}
	assert.Equal(t, map[string]bool{first: true, second: true}, got, "each id gets the head")

	testutil.Send(t, ws, dc.unsub(3, "newHeads", first))
	assert.Equal(t, true, testutil.RecvJSON(t, ws)["result"])
	r.up.Publish("newHeads", []byte(`{"number":"0x2"}`))
	assert.JSONEq(t, dc.frame("", second, `{"number":"0x2"}`), testutil.Recv(t, ws), "the other id keeps its heads")
	assert.Zero(t, r.up.CountReceived("eth_unsubscribe"), "the upstream subscription stays")
	testutil.Send(t, ws, dc.unsub(4, "newHeads", first))
	assert.Equal(t, map[string]any{"code": float64(-32000), "message": "subscription not found"}, testutil.RecvJSON(t, ws)["error"],
		"an id the connection does not hold, answered as geth answers it")

	other := r.dial(t)
	testutil.Send(t, other, dc.subscribe(1, "newHeads"))
	assert.Equal(t, first, testutil.RecvJSON(t, other)["result"], fmt.Sprintf("another connection shares %s", first))
}
