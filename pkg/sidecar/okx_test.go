package sidecar_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/okx"
)

// An OKX program gets from the sidecar what it gets from the exchange: a
// subscribe of three arguments, one unknown, is answered by an event
// frame for each, the unknown one refused with 60018 naming it; "ping"
// is answered "pong".
func TestOKXProgramSeesWhatItWouldDirectly(t *testing.T) {
	r := newRig(t, okx.Name, nil, exchangetest.WithTopics("tickers:BTC-USDT", "tickers:ETH-USDT"))
	const subscribe = `{"id":"5","op":"subscribe","args":[{"channel":"tickers","instId":"BTC-USDT"},` +
		`{"channel":"tickers","instId":"NOPE-USDT"},{"channel":"tickers","instId":"ETH-USDT"},{"channel":"tickers","instId":"GONE-USDT"}]}`
	const unsubscribe = `{"id":"6","op":"unsubscribe","args":[{"channel":"tickers","instId":"BTC-USDT"},{"channel":"tickers","instId":"NOPE-USDT"}]}`
	const withoutID = `{"op":"subscribe","args":[{"channel":"tickers","instId":"BTC-USDT"}]}` // the id is optional
	answers := func(ws *websocket.Conn) []map[string]any {
		require.NoError(t, ws.WriteMessage(websocket.TextMessage, []byte(subscribe)))
		require.NoError(t, ws.WriteMessage(websocket.TextMessage, []byte(unsubscribe)))
		require.NoError(t, ws.WriteMessage(websocket.TextMessage, []byte(withoutID)))
		var got []map[string]any
		for len(got) < 7 {
			require.NoError(t, ws.SetReadDeadline(time.Now().Add(5*time.Second)))
			_, frame, err := ws.ReadMessage()
			require.NoError(t, err)
			var m map[string]any
			require.NoError(t, json.Unmarshal(frame, &m), "%s", frame)
			if _, push := m["data"]; push {
				continue
			}
			delete(m, "connId")
			got = append(got, m)
		}
		require.NoError(t, ws.WriteMessage(websocket.TextMessage, []byte("ping")))
		for {
			_, frame, err := ws.ReadMessage()
			require.NoError(t, err)
			if string(frame) == "pong" {
				return got
			}
		}
	}
	dial := func(url string) *websocket.Conn {
		ws, resp, err := websocket.DefaultDialer.Dial(url, nil)
		require.NoError(t, err)
		_ = resp.Body.Close()
		t.Cleanup(func() { _ = ws.Close() })
		return ws
	}
	direct := answers(dial(r.up.URL()))
	through := answers(r.dial(t))
	assert.ElementsMatch(t, direct, through)
	var refused []string
	unsubscribed, withoutIDs := 0, 0
	for _, m := range through {
		switch m["event"] {
		case "error":
			assert.Equal(t, "5", m["id"])
			assert.Equal(t, "60018", m["code"])
			refused = append(refused, m["msg"].(string))
		case "unsubscribe":
			assert.Equal(t, "6", m["id"])
			unsubscribed++
		case "subscribe":
			if _, ok := m["id"]; !ok {
				withoutIDs++
			}
		}
	}
	assert.Equal(t, 1, withoutIDs, "a subscribe without an id is answered without one")
	require.Len(t, refused, 2)
	assert.Contains(t, refused[0]+refused[1], "channel:tickers,instId:NOPE-USDT ", "each refusal names its own argument")
	assert.Contains(t, refused[0]+refused[1], "channel:tickers,instId:GONE-USDT ")
	assert.Equal(t, 2, unsubscribed, "every argument of an unsubscribe answered, held or not")
}

// An OKX client behind the sidecar has each refused topic refused with
// its own reason, at once, and the others subscribed.
func TestOKXClientRefusalsThroughTheSidecar(t *testing.T) {
	r := newRig(t, okx.Name, nil, exchangetest.WithTopics("tickers:BTC-USDT"))
	ctx := testutil.Context(t)
	c, err := client.Dial(ctx, r.wsURL(), client.WithProtocol(okx.Protocol()), client.WithRequestTimeout(20*time.Second))
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	start := time.Now()
	_, errs, err := c.SubscribeEach(ctx, []string{"tickers:NOPE-USDT", "tickers:BTC-USDT", "tickers:GONE-USDT"})
	require.NoError(t, err)
	require.Less(t, time.Since(start), 10*time.Second, "answered, not timed out")
	assert.NoError(t, errs[1])
	for i, name := range map[int]string{0: "NOPE-USDT", 2: "GONE-USDT"} {
		var rpcErr *client.RPCError
		require.ErrorAs(t, errs[i], &rpcErr, name)
		assert.Equal(t, okx.CodeNoSuchChannel, rpcErr.Code)
		assert.Contains(t, rpcErr.Message, "instId:"+name+" ")
	}
}
