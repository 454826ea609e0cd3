package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/rpc"
	"github.com/gorilla/websocket"

	"github.com/wsfan/wsfan/internal/jsonscan"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// echoServer is the leanest JSON-RPC server gorilla allows: its read loop
// slices the request's id and writes a prebuilt small result at once,
// from the same goroutine. It takes the server out of the measurement as
// far as loopback allows, so the clients' own costs show (REFERENCE.md's
// "raw gorilla: echo round trip, 100 B": ~65,000 req/s).
func echoServer(b *testing.B) string {
	result := Payload(PayloadSizes[0].Size)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := (&websocket.Upgrader{}).Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer ws.Close()
		var out []byte
		for {
			_, req, err := ws.ReadMessage()
			if err != nil {
				return
			}
			id, ok := requestID(req)
			if !ok {
				return
			}
			out = append(out[:0], `{"jsonrpc":"2.0","id":`...)
			out = append(out, id...)
			out = append(out, `,"result":`...)
			out = append(out, result...)
			out = append(out, '}')
			if ws.WriteMessage(websocket.TextMessage, out) != nil {
				return
			}
		}
	}))
	b.Cleanup(srv.Close)
	return "ws" + strings.TrimPrefix(srv.URL, "http")
}

// requestID slices the "id" member of a request.
func requestID(req []byte) ([]byte, bool) {
	m := jsonscan.Object(req, 0)
	for {
		key, start, ok := m.Next()
		if !ok {
			return nil, false
		}
		end := m.Skip()
		if bytes.Equal(key, []byte("id")) {
			return req[start:end], true
		}
	}
}

// BenchmarkCallEcho is sequential and concurrent calls against echoServer,
// the same server for every implementation: the client's own overhead per
// call, which the exchangetest-based BenchmarkCall hides behind the
// server's.
func BenchmarkCallEcho(b *testing.B) {
	for _, callers := range []int{1, 100} {
		b.Run(fmt.Sprintf("callers=%d/impl=wsfan", callers), func(b *testing.B) {
			c, err := client.Dial(setupCtx(b), echoServer(b), client.WithProtocol(protocol.Ethereum()))
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = c.Close() })
			ctx := context.Background()
			run(b, callers, func() error {
				var res json.RawMessage
				return c.Call(ctx, "bench_payload", json.RawMessage(`["small"]`), &res)
			})
		})
		b.Run(fmt.Sprintf("callers=%d/impl=geth", callers), func(b *testing.B) {
			c, err := rpc.DialContext(setupCtx(b), echoServer(b))
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(c.Close)
			ctx := context.Background()
			run(b, callers, func() error {
				var res json.RawMessage
				return c.CallContext(ctx, &res, "bench_payload", "small")
			})
		})
		if callers == 1 {
			b.Run("callers=1/impl=gorilla", func(b *testing.B) {
				ws, _, err := websocket.DefaultDialer.DialContext(setupCtx(b), echoServer(b), nil)
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { _ = ws.Close() })
				req := ethRequest(1, "bench_payload", `["small"]`)
				runSequential(b, func() error {
					_, err := gorillaCall(ws, req)
					return err
				})
			})
		}
	}
}

// run is runSequential for one caller and runConcurrent for more.
func run(b *testing.B, callers int, call func() error) {
	if callers == 1 {
		runSequential(b, call)
		return
	}
	runConcurrent(b, callers, call)
}
