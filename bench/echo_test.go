package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/ethereum/go-ethereum/rpc"
	"github.com/gorilla/websocket"

	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// BenchmarkCallEcho is sequential and concurrent small calls against the
// node server's /echo (nodeHandler: one goroutine per connection that
// decodes each request with encoding/json and writes its answer), the
// same server for every implementation, run in this process
// (server=inproc) and in a child process (server=process). The
// exchangetest-based BenchmarkCall has a heavier server; here the
// clients' own costs show, and server=process shows them as deployed,
// without the server competing for this process's scheduler.
// impl=gorilla writes a pre-encoded request and reads its own response:
// the floor, without a reader goroutine.
func BenchmarkCallEcho(b *testing.B) {
	for _, srv := range nodeServers {
		b.Run("server="+srv.name, func(b *testing.B) {
			url := srv.start(b) + "/echo"
			for _, callers := range []int{1, 100} {
				benchCallEcho(b, url, callers)
			}
		})
	}
}

// benchCallEcho runs the impl= sub-benchmarks of callers callers against
// url.
func benchCallEcho(b *testing.B, url string, callers int) {
	b.Run(fmt.Sprintf("callers=%d/impl=wsfan", callers), func(b *testing.B) {
		c, err := client.Dial(setupCtx(b), url, client.WithProtocol(protocol.Ethereum()))
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
		c, err := rpc.DialContext(setupCtx(b), url)
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
			ws, _, err := websocket.DefaultDialer.DialContext(setupCtx(b), url, nil)
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

// run is runSequential for one caller and runConcurrent for more.
func run(b *testing.B, callers int, call func() error) {
	if callers == 1 {
		runSequential(b, call)
		return
	}
	runConcurrent(b, callers, call)
}
