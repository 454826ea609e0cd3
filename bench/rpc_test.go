package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
)

// BenchmarkCall is the end-to-end latency and sequential throughput of one
// RPC call on loopback (geeRPC: small ~100 B / medium ~10 KB / large ~1 MB;
// Brane: sequential throughput and p50-p99.9). The server answers
// bench_payload ["<size>"] with a result of that size; the client reads it
// as raw JSON. impl=gorilla writes a pre-encoded request and reads the
// response on a raw connection: the floor.
func BenchmarkCall(b *testing.B) {
	for _, p := range PayloadSizes {
		params := `["` + p.Name + `"]`
		b.Run(fmt.Sprintf("size=%s/impl=wsfan", p.Name), func(b *testing.B) {
			c := dialWsfan(b, rpcServer(b))
			ctx := context.Background()
			var res json.RawMessage
			b.SetBytes(int64(p.Size))
			runSequential(b, func() error {
				return c.Call(ctx, "bench_payload", json.RawMessage(params), &res)
			})
		})
		b.Run(fmt.Sprintf("size=%s/impl=geth", p.Name), func(b *testing.B) {
			c := dialGeth(b, rpcServer(b))
			ctx := context.Background()
			var res json.RawMessage
			b.SetBytes(int64(p.Size))
			runSequential(b, func() error {
				return c.CallContext(ctx, &res, "bench_payload", p.Name)
			})
		})
		b.Run(fmt.Sprintf("size=%s/impl=gorilla", p.Name), func(b *testing.B) {
			ws := dialGorilla(b, rpcServer(b))
			req := ethRequest(1, "bench_payload", params)
			b.SetBytes(int64(p.Size))
			runSequential(b, func() error {
				_, err := gorillaCall(ws, req)
				return err
			})
		})
	}
}

// BenchmarkCallConcurrent is 1, 10, 50 and 100 goroutines calling on one
// connection (geeRPC: 100 concurrent, small ~200,000 req/s, p50 475 µs;
// the Thalex report's "RPC with 1-100 pending" end to end). Every call is
// the small bench_payload.
func BenchmarkCallConcurrent(b *testing.B) {
	for _, callers := range []int{1, 10, 50, 100} {
		b.Run(fmt.Sprintf("callers=%d/impl=wsfan", callers), func(b *testing.B) {
			c := dialWsfan(b, rpcServer(b))
			ctx := context.Background()
			runConcurrent(b, callers, func() error {
				var res json.RawMessage
				return c.Call(ctx, "bench_payload", json.RawMessage(`["small"]`), &res)
			})
		})
		b.Run(fmt.Sprintf("callers=%d/impl=geth", callers), func(b *testing.B) {
			c := dialGeth(b, rpcServer(b))
			ctx := context.Background()
			runConcurrent(b, callers, func() error {
				var res json.RawMessage
				return c.CallContext(ctx, &res, "bench_payload", "small")
			})
		})
	}
}

// BenchmarkDispatch is geeRPC's dispatch overhead: the same small answer
// from a direct Go call (path=direct) and through a loopback RPC
// (path=rpc, the same work as BenchmarkCall/size=small/impl=wsfan).
func BenchmarkDispatch(b *testing.B) {
	b.Run("path=direct", func(b *testing.B) {
		answer := directHandler()
		var res json.RawMessage
		b.ReportAllocs()
		for b.Loop() {
			res = answer(json.RawMessage(`["small"]`))
		}
		if len(res) == 0 {
			b.Fatal("no result")
		}
	})
	b.Run("path=rpc", func(b *testing.B) {
		c := dialWsfan(b, rpcServer(b))
		ctx := context.Background()
		var res json.RawMessage
		b.ReportAllocs()
		for b.Loop() {
			if err := c.Call(ctx, "bench_payload", json.RawMessage(`["small"]`), &res); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// directHandler is bench_payload as a plain function.
//
//go:noinline
func directHandler() func(json.RawMessage) json.RawMessage {
	small := json.RawMessage(Payload(100))
	return func(params json.RawMessage) json.RawMessage {
		if string(params) == `["small"]` {
			return small
		}
		return nil
	}
}
