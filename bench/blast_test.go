package bench

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"github.com/ethereum/go-ethereum/rpc"
	"github.com/gorilla/websocket"

	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/ethereum"
)

// BenchmarkNotifyBlast is notification delivery as a subscriber meets it:
// the node server's /blast answers eth_subscribe ["newHeads"] and then
// writes b.N ~615 B notifications as fast as the socket takes them, with
// no flow control, while the benchmark goroutine only counts what it
// receives. The server runs in this process (server=inproc) or in a child
// process (server=process). impl=wsfan uses default options and reports
// the share it dropped (dropped/op; 0 means every message arrived);
// impl=geth reads the channel given to EthSubscribe; impl=gorilla calls
// ReadMessage on a raw connection, the floor. Timed from the subscribe
// request to the last message; run with -benchtime 300000x for the
// 300,000-message blast of issue 9.
func BenchmarkNotifyBlast(b *testing.B) {
	for _, srv := range nodeServers {
		b.Run("server="+srv.name, func(b *testing.B) {
			node := srv.start(b)
			base := node.base
			b.Run("impl=wsfan", func(b *testing.B) {
				c, err := client.Dial(setupCtx(b), blastURL(base, b.N), client.WithProtocol(ethereum.Protocol()))
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { _ = c.Close() })
				b.ReportAllocs()
				self, server := startUsage(os.Getpid(), ""), node.probe()
				b.ResetTimer()
				sub := subscribeHeads(b, c)
				received := 0
				for received+int(sub.Dropped()) < b.N {
					if _, ok := <-sub.C(); !ok {
						b.Fatalf("subscription ended after %d messages", received)
					}
					received++
				}
				b.StopTimer()
				self.report(b, b.N)
				server.report(b, b.N)
				ReportRate(b, b.N, "msg/s")
				b.ReportMetric(float64(b.N-received)/float64(b.N), "dropped/op")
			})
			b.Run("impl=geth", func(b *testing.B) {
				c, err := rpc.DialContext(setupCtx(b), blastURL(base, b.N))
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(c.Close)
				ch := make(chan json.RawMessage, 1024)
				b.ReportAllocs()
				self, server := startUsage(os.Getpid(), ""), node.probe()
				b.ResetTimer()
				sub, err := c.EthSubscribe(setupCtx(b), ch, "newHeads")
				if err != nil {
					b.Fatal(err)
				}
				for range b.N {
					select {
					case <-ch:
					case err := <-sub.Err():
						b.Fatal(err)
					}
				}
				b.StopTimer()
				self.report(b, b.N)
				server.report(b, b.N)
				ReportRate(b, b.N, "msg/s")
			})
			b.Run("impl=gorilla", func(b *testing.B) {
				ws, _, err := websocket.DefaultDialer.DialContext(setupCtx(b), blastURL(base, b.N), nil)
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { _ = ws.Close() })
				b.ReportAllocs()
				self, server := startUsage(os.Getpid(), ""), node.probe()
				b.ResetTimer()
				if _, err := gorillaCall(ws, ethRequest(1, "eth_subscribe", `["newHeads"]`)); err != nil {
					b.Fatal(err)
				}
				for range b.N {
					if typ, _, err := ws.ReadMessage(); err != nil || typ != websocket.TextMessage {
						b.Fatal(typ, err)
					}
				}
				b.StopTimer()
				self.report(b, b.N)
				server.report(b, b.N)
				ReportRate(b, b.N, "msg/s")
			})
		})
	}
}

// blastURL asks the node server at base for a blast of n notifications.
func blastURL(base string, n int) string { return fmt.Sprintf("%s/blast?n=%d", base, n) }

// subscribeHeads subscribes c to newHeads with the subscription's default
// options.
func subscribeHeads(b *testing.B, c *client.Client) *client.Subscription {
	sub, err := c.Subscribe(setupCtx(b), []string{"newHeads"})
	if err != nil {
		b.Fatal(err)
	}
	return sub
}
