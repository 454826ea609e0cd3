package sidecar_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/pkg/ethereum"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/sidecar"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// BenchmarkHostile times one request of n items on each path a local
// program drives, at n = 10², 10³, 10⁴, 10⁵, with the limits raised so
// that every item is worked on (the frame limit to 32 MiB, the topics a
// client may hold and the batch length past n): its ns/item must stay
// flat across the steps (linear cost), and ns/op at 10⁵ is how long the
// largest request waits for its answer. With the default limits each is
// refused sooner (TestHugeSubscribeRefusedAtTheLimit,
// TestBatchPastTheLimitIsOneError).
//
//	unknown:         a subscribe of n channels the sidecar does not offer
//	unsubscribe:     an unsubscribe of n channels the client does not hold
//	batch:           a batch of n requests that are not JSON-RPC (each an error)
//	eth_unsubscribe: a batch of n eth_unsubscribe of ids not held, by a
//	                 client holding 1,000 subscriptions
//	sse:             a stream of n topics the sidecar does not offer
func BenchmarkHostile(b *testing.B) {
	for _, path := range []string{"unknown", "unsubscribe", "batch", "eth_unsubscribe", "sse"} {
		for _, n := range []int{100, 1_000, 10_000, 100_000} {
			b.Run(fmt.Sprintf("path=%s/n=%d", path, n), func(b *testing.B) {
				benchHostile(b, path, n)
			})
		}
	}
}

func benchHostile(b *testing.B, path string, n int) {
	dialect, offered := exchangetest.Dialect(thalex.Name), []string{"ticker.BTC-PERPETUAL.raw"}
	if path == "eth_unsubscribe" {
		dialect, offered = ethereum.Name, nil
	}
	up := exchangetest.NewServer(dialect)
	b.Cleanup(up.Close)
	sc, wsURL := startBenchSidecar(b, up, func(c *sidecar.Config) {
		c.Protocol = dialect.String()
		c.Topics = offered
		c.MaxFrameBytes = 32 << 20
		c.QueueBytes = 64 << 20
		c.MaxTopicsPerClient = 1 << 20
		c.MaxBatch = 1 << 20
	})
	defer sc.Close()
	if path == "sse" {
		benchHostileStream(b, strings.TrimSuffix(strings.Replace(wsURL, "ws", "http", 1), "/ws"), n)
		return
	}
	ws, resp, err := websocket.DefaultDialer.Dial(wsURL, nil)
	require.NoError(b, err)
	_ = resp.Body.Close()
	defer ws.Close()
	ws.SetReadLimit(0)

	var req string
	switch path {
	case "unknown", "unsubscribe":
		channels := make([]string, n)
		for i := range channels {
			channels[i] = fmt.Sprintf("X%06d", i)
		}
		method := "public/subscribe"
		if path == "unsubscribe" {
			method = "unsubscribe"
		}
		req = channelsRequest(method)(channels)
	case "batch":
		req = batchOf(n, "1")
	case "eth_unsubscribe":
		roundTrip(b, ws, batchOf(1000, `{"jsonrpc":"2.0","id":%d,"method":"eth_subscribe","params":["newHeads"]}`))
		req = batchOf(n, `{"jsonrpc":"2.0","id":%[1]d,"method":"eth_unsubscribe","params":["0x%[1]x"]}`)
	}
	b.ResetTimer()
	for range b.N {
		roundTrip(b, ws, req)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/item")
}

// roundTrip sends req and reads its answer.
func roundTrip(b *testing.B, ws *websocket.Conn, req string) {
	b.Helper()
	require.NoError(b, ws.WriteMessage(websocket.TextMessage, []byte(req)))
	_ = ws.SetReadDeadline(time.Now().Add(time.Minute))
	_, _, err := ws.ReadMessage()
	require.NoError(b, err)
}

// benchHostileStream asks for a stream of n unknown topics, refused.
func benchHostileStream(b *testing.B, base string, n int) {
	q := url.Values{}
	for i := range n {
		q.Add("topic", fmt.Sprintf("X%06d", i))
	}
	target := base + "/v1/stream?" + q.Encode()
	b.ResetTimer()
	for range b.N {
		resp, err := http.Get(target)
		require.NoError(b, err)
		_ = resp.Body.Close()
		require.GreaterOrEqual(b, resp.StatusCode, 400)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/item")
}
