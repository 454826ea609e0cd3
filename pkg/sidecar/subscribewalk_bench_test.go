package sidecar_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/sidecar"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// BenchmarkSubscribeWalkUpstream measures a local subscribe's whole walk
// (ARCHITECTURE.md, "A subscribe's walk") to the upstream request and
// back: one client subscribes a topic nobody holds, so the hub parses
// it, opens it and the upstream client sends it, then unsubscribes it
// (its grace a millisecond); an op is the pair. Rounds of upstream
// subscribes start at most every 10 ms (the hub's gather window), which
// a loop this fast waits for: ns/op is mostly that window, allocs/op
// the walk's.
func BenchmarkSubscribeWalkUpstream(b *testing.B) {
	up := exchangetest.NewServer(thalex.Name)
	defer up.Close()
	sc, url := startBenchSidecar(b, up, func(c *sidecar.Config) {
		c.Grace = time.Millisecond
		c.MaxTopics = 1 << 20
	})
	defer sc.Close()
	ws, _, err := websocket.DefaultDialer.Dial(url, nil)
	require.NoError(b, err)
	defer ws.Close()
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		topic := fmt.Sprintf("ticker.W%d-PERPETUAL.raw", i)
		for _, req := range []string{dialects[0].subscribe(2*i+1, topic), dialects[0].unsub(2*i+2, topic, "")} {
			require.NoError(b, ws.WriteMessage(websocket.TextMessage, []byte(req)))
			if _, _, err := ws.ReadMessage(); err != nil {
				b.Fatal(err)
			}
		}
	}
}
