package sidecar_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
		`{"channel":"tickers","instId":"NOPE-USDT"},{"channel":"tickers","instId":"ETH-USDT"}]}`
	answers := func(ws *websocket.Conn) []map[string]any {
		require.NoError(t, ws.WriteMessage(websocket.TextMessage, []byte(subscribe)))
		var got []map[string]any
		for len(got) < 3 {
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
	var refusals int
	for _, m := range through {
		assert.Equal(t, "5", m["id"])
		if m["event"] == "error" {
			refusals++
			assert.Equal(t, "60018", m["code"])
			assert.Contains(t, m["msg"], "channel:tickers,instId:NOPE-USDT")
		}
	}
	assert.Equal(t, 1, refusals)
}
