package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/deribit"
	"github.com/wsfan/wsfan/pkg/ethereum"
	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// runDemo runs `sidecar -demo -protocol dialect` until the test ends and
// returns the address its instructions name.
func runDemo(t *testing.T, dialect string) string {
	t.Helper()
	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		err := run(ctx, []string{"-demo", "-protocol", dialect, "-listen", "127.0.0.1:0"}, noEnv, pw, io.Discard)
		_ = pw.Close()
		done <- err
	}()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	wscat := regexp.MustCompile(`go run ./cmd/wscat ws://([^/]+)/ws`)
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		if m := wscat.FindStringSubmatch(sc.Text()); m != nil {
			go func() { _, _ = io.Copy(io.Discard, pr) }()
			return m[1]
		}
	}
	t.Fatal("the demo printed no wscat line")
	return ""
}

// The demo tells the truth: a topic it does not publish is refused with
// the list of those it does (also in /v1/status), and the calls the
// README makes are answered.
func TestDemoRefusesUnknownTopicsAndAnswersCalls(t *testing.T) {
	for _, tc := range []struct {
		dialect, method string
		proto           protocol.Protocol
	}{
		{"thalex", "public/instruments", thalex.Protocol()},
		{"deribit", "public/get_instruments", deribit.Protocol(deribit.WithHeartbeat(0))},
		{"ethereum", "eth_blockNumber", ethereum.Protocol()},
	} {
		t.Run(tc.dialect, func(t *testing.T) {
			addr := runDemo(t, tc.dialect)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			c, err := client.Dial(ctx, "ws://"+addr+"/ws", client.WithProtocol(tc.proto))
			require.NoError(t, err)
			defer c.Close()

			res, err := c.CallRaw(ctx, tc.method, nil)
			require.NoError(t, err, tc.method)
			assert.NotEmpty(t, res)

			// Over WebSocket the refusal is the dialect's own (Thalex and
			// Deribit leave the topic out of the acknowledgement); the SSE
			// error and /v1/status name what the demo offers.
			_, err = c.Subscribe(ctx, []string{"ticker.BTC-PERPTUAL.raw"})
			require.ErrorIs(t, err, client.ErrRefused, "a typo is refused")
			for path, want := range map[string]string{
				"/v1/stream?topic=ticker.BTC-PERPTUAL.raw": `unknown topic "ticker.BTC-PERPTUAL.raw": this sidecar offers`,
				"/v1/status": `"offered_topics"`,
			} {
				resp, err := http.Get("http://" + addr + path)
				require.NoError(t, err)
				body, _ := io.ReadAll(resp.Body)
				_ = resp.Body.Close()
				text := string(body)
				var refusal struct{ Error string }
				if json.Unmarshal(body, &refusal) == nil && refusal.Error != "" {
					text = refusal.Error // a refusal's JSON body
				}
				assert.Contains(t, text, want, path)
			}
		})
	}
}

// A program that speaks another exchange's dialect to the sidecar is
// answered, and the answer names the dialect the sidecar speaks (the
// JSON-RPC dialects took an OKX frame, which has no id, as a notification
// and said nothing; OKX answered "Invalid request" alone).
func TestDemoNamesItsDialect(t *testing.T) {
	for dialect, frame := range map[string]string{
		"thalex":   `{"op":"subscribe","args":[{"channel":"tickers","instId":"BTC-USDT"}]}`,
		"ethereum": `{"event":"subscribe","data":{"type":"Ticker","symbol":"BTCUSD"}}`,
		"okx":      `{"jsonrpc":"2.0","id":1,"method":"public/subscribe","params":{"channels":["ticker.BTC-PERPETUAL.raw"]}}`,
		"ethereal": `{"jsonrpc":"2.0","id":1,"method":"eth_subscribe","params":["newHeads"]}`,
	} {
		t.Run(dialect, func(t *testing.T) {
			addr := runDemo(t, dialect)
			conn, _, err := websocket.DefaultDialer.Dial("ws://"+addr+"/ws", nil)
			require.NoError(t, err)
			defer conn.Close()
			require.NoError(t, conn.WriteMessage(websocket.TextMessage, []byte(frame)))
			require.NoError(t, conn.SetReadDeadline(time.Now().Add(10*time.Second)))
			_, answer, err := conn.ReadMessage()
			require.NoError(t, err, "no answer to %s", frame)
			assert.Contains(t, string(answer), "this server speaks the "+dialect+" dialect")
		})
	}
}
