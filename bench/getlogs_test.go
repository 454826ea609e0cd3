package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/bytedance/sonic"
)

// logCounts are the eth_getLogs response sizes of the Brane report.
var logCounts = []int{100, 1000, 5000}

// BenchmarkGetLogsDecode decodes an eth_getLogs result of n logs (about
// 700 B each) into []Log (Brane: 0.258 ms / ~2.5 ms / ~12.5 ms, ~2.5 µs per
// log). impl=sonic is what client.Call uses; impl=encoding-json is what
// go-ethereum's client uses.
func BenchmarkGetLogsDecode(b *testing.B) {
	for _, n := range logCounts {
		data := Logs(n)
		for _, impl := range []struct {
			name   string
			decode func([]byte, any) error
		}{{"sonic", sonic.Unmarshal}, {"encoding-json", json.Unmarshal}} {
			b.Run(fmt.Sprintf("logs=%d/impl=%s", n, impl.name), func(b *testing.B) {
				b.SetBytes(int64(len(data)))
				b.ReportAllocs()
				for b.Loop() {
					var logs []Log
					if err := impl.decode(data, &logs); err != nil || len(logs) != n {
						b.Fatal(len(logs), err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/log")
			})
		}
	}
}

// BenchmarkGetLogsCall is the whole eth_getLogs call on loopback: request,
// a response of n logs over the WebSocket (3.5 MB for 5,000: far past the
// 64 KB frame cap the Brane report hit) and decoding into []Log.
func BenchmarkGetLogsCall(b *testing.B) {
	for _, n := range logCounts {
		params := fmt.Sprintf(`[{"n":%d}]`, n)
		b.Run(fmt.Sprintf("logs=%d/impl=wsfan", n), func(b *testing.B) {
			c := dialWsfan(b, rpcServer(b))
			ctx := context.Background()
			b.SetBytes(int64(len(Logs(n))))
			runSequential(b, func() error {
				var logs []Log
				if err := c.Call(ctx, "eth_getLogs", json.RawMessage(params), &logs); err != nil {
					return err
				}
				return checkLogs(logs, n)
			})
		})
		b.Run(fmt.Sprintf("logs=%d/impl=geth", n), func(b *testing.B) {
			c := dialGeth(b, rpcServer(b))
			ctx := context.Background()
			arg := map[string]int{"n": n}
			b.SetBytes(int64(len(Logs(n))))
			runSequential(b, func() error {
				var logs []Log
				if err := c.CallContext(ctx, &logs, "eth_getLogs", arg); err != nil {
					return err
				}
				return checkLogs(logs, n)
			})
		})
	}
}

func checkLogs(logs []Log, n int) error {
	if len(logs) != n || logs[n-1].LogIndex == "" {
		return fmt.Errorf("got %d logs, want %d", len(logs), n)
	}
	return nil
}
