package sidecar_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/pkg/ethereum"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/sidecar"
)

// BenchmarkForwardedCall measures a call forwarded upstream, end to end
// in one process: a local WebSocket client's request, the sidecar's
// forward, a real exchange server's answer (pkg/exchangetest, Ethereum),
// and the answer read back; allocs/op counts all three sides. With no
// Config.TracerProvider (as here) tracing adds nothing to it
// (docs/tracing.md: compared with the commit before tracing).
func BenchmarkForwardedCall(b *testing.B) {
	benchForward(b, nil)
}

// benchForward runs BenchmarkForwardedCall's loop against a sidecar that
// tune configures.
func benchForward(b *testing.B, tune func(*sidecar.Config)) {
	up := exchangetest.NewServer(ethereum.Name)
	defer up.Close()
	up.Handle("eth_blockNumber", func(json.RawMessage) (any, *protocol.Error) { return "0x10", nil })
	sc, url := startBenchSidecar(b, up, func(c *sidecar.Config) {
		c.Protocol = ethereum.Name
		if tune != nil {
			tune(c)
		}
	})
	defer sc.Close()
	ws, resp, err := websocket.DefaultDialer.Dial(url, nil)
	require.NoError(b, err)
	_ = resp.Body.Close()
	defer func() { _ = ws.Close() }()
	req := []byte(`{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}`)
	call := func() {
		if err := ws.WriteMessage(websocket.TextMessage, req); err != nil {
			b.Fatal(err)
		}
		_, msg, err := ws.ReadMessage()
		if err != nil || !strings.Contains(string(msg), `"result":"0x10"`) {
			b.Fatalf("answer %s, %v", msg, err)
		}
	}
	for range 100 { // warm up: buffers, goroutine stacks
		call()
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		call()
	}
}
