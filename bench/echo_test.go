package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/rpc"
	"github.com/gorilla/websocket"

	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/ethereum"
)

// BenchmarkCallEcho is sequential and concurrent small calls against the
// node server's /echo (nodeHandler: one goroutine per connection that
// decodes each request with encoding/json and writes its answer), the
// same server for every implementation, run in this process
// (server=inproc) and in a child process (server=process). The
// exchangetest-based BenchmarkCall has a heavier server; here the
// clients' own costs show, and server=process shows them as deployed,
// without the server competing for this process's scheduler; there the
// server's own CPU time and context switches per call are reported too
// (server-cpu-µs/op, server-ctxsw/op).
//
// impl=gorilla is the floor on a raw connection, with no reader
// goroutine: with one caller it writes a pre-encoded request and reads
// its own response; with 100 it keeps 100 requests in flight (a goroutine
// writes one whenever a response has freed a slot, the benchmark
// goroutine reads the responses, which the server sends in order), which
// is as fast as this server answers one connection.
func BenchmarkCallEcho(b *testing.B) {
	for _, srv := range nodeServers {
		b.Run("server="+srv.name, func(b *testing.B) {
			node := srv.start(b)
			for _, callers := range []int{1, 100} {
				benchCallEcho(b, node, callers)
			}
		})
	}
}

// benchCallEcho runs the impl= sub-benchmarks of callers callers against
// node's /echo.
func benchCallEcho(b *testing.B, node nodeURL, callers int) {
	url := node.base + "/echo"
	b.Run(fmt.Sprintf("callers=%d/impl=wsfan", callers), func(b *testing.B) {
		c, err := client.Dial(setupCtx(b), url, client.WithProtocol(ethereum.Protocol()))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = c.Close() })
		ctx := context.Background()
		server := node.probe()
		run(b, callers, func() error {
			var res json.RawMessage
			return c.Call(ctx, "bench_payload", json.RawMessage(`["small"]`), &res)
		})
		server.report(b, b.N)
	})
	b.Run(fmt.Sprintf("callers=%d/impl=geth", callers), func(b *testing.B) {
		c, err := rpc.DialContext(setupCtx(b), url)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(c.Close)
		ctx := context.Background()
		server := node.probe()
		run(b, callers, func() error {
			var res json.RawMessage
			return c.CallContext(ctx, &res, "bench_payload", "small")
		})
		server.report(b, b.N)
	})
	b.Run(fmt.Sprintf("callers=%d/impl=gorilla", callers), func(b *testing.B) {
		ws, _, err := websocket.DefaultDialer.DialContext(setupCtx(b), url, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = ws.Close() })
		req := ethRequest(1, "bench_payload", `["small"]`)
		server := node.probe()
		if callers == 1 {
			runSequential(b, func() error {
				_, err := gorillaCall(ws, req)
				return err
			})
		} else {
			runPipelined(b, ws, req, callers)
		}
		server.report(b, b.N)
	})
}

// run is runSequential for one caller and runConcurrent for more.
func run(b *testing.B, callers int, call func() error) {
	if callers == 1 {
		runSequential(b, call)
		return
	}
	runConcurrent(b, callers, call)
}

// runPipelined times b.N requests on ws with window of them in flight:
// a goroutine writes req whenever a slot is free, the benchmark goroutine
// reads the responses, which a server answering in order returns in
// order. It reports what runSequential reports; a request's latency runs
// from its write to its response.
func runPipelined(b *testing.B, ws *websocket.Conn, req []byte, window int) {
	var (
		slots = make(chan struct{}, window)
		epoch = time.Now()
		sent  = make([]atomic.Int64, window) // since epoch, by request number mod window
		lat   = NewLatencies(b.N)
		stop  = make(chan struct{}) // closed when reading fails
		wrote = make(chan error, 1)
	)
	b.ReportAllocs()
	self := startUsage(os.Getpid(), "")
	b.ResetTimer()
	go func() {
		for i := range b.N {
			select {
			case slots <- struct{}{}:
			case <-stop:
				wrote <- nil
				return
			}
			sent[i%window].Store(int64(time.Since(epoch)))
			if err := ws.WriteMessage(websocket.TextMessage, req); err != nil {
				wrote <- err
				return
			}
		}
		wrote <- nil
	}()
	for i := range b.N {
		if _, _, err := ws.ReadMessage(); err != nil {
			close(stop) // the writer ends now or when b's cleanup closes ws
			b.Fatal(err)
		}
		lat.Add(time.Since(epoch) - time.Duration(sent[i%window].Load()))
		<-slots
	}
	b.StopTimer()
	if err := <-wrote; err != nil {
		b.Fatal(err)
	}
	self.report(b, b.N)
	ReportRate(b, b.N, "req/s")
	lat.Report(b)
}
