package bench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/ethereum"
	"github.com/wsfan/wsfan/pkg/standby"
)

// BenchmarkStandbyBlast is what a hot standby costs a message: the node
// server writes b.N chained heads (each its own hash) on each connection,
// as fast as the socket takes them (feed=blast) or one every 50 µs
// (feed=20k, a steady 20,000 a second), and the program counts them.
// impl=one reads one connection (client.Dial); impl=standby reads two
// legs (standby.Dial with one standby), each head arriving twice
// and delivered once; the clock (and the CPU count) starts before the
// subscription (its requests are counted too: a few hundred
// microseconds against a run's hundreds of milliseconds) and runs on
// for settle after the last head delivered, in both, so the trailing
// leg's copies are counted. cpu-µs/op is this process's CPU a message (the
// client's alone with server=process); dup/op counts heads delivered
// twice and must be 0.
func BenchmarkStandbyBlast(b *testing.B) {
	const settle = 300 * time.Millisecond
	for _, srv := range nodeServers {
		b.Run("server="+srv.name, func(b *testing.B) {
			node := srv.start(b)
			for _, feed := range []struct{ name, every string }{{"blast", "0"}, {"20k", "50us"}} {
				for _, spares := range []int{0, 1} {
					name := map[int]string{0: "impl=one", 1: "impl=standby"}[spares]
					b.Run("feed="+feed.name+"/"+name, func(b *testing.B) {
						url := fmt.Sprintf("%s/blast?n=%d&chain=1&every=%s", node.base, b.N, feed.every)
						var subscribe func() (*client.Subscription, error)
						var events <-chan client.Event
						if spares == 0 {
							c, err := client.Dial(setupCtx(b), url, client.WithProtocol(ethereum.Protocol()))
							if err != nil {
								b.Fatal(err)
							}
							b.Cleanup(func() { _ = c.Close() })
							subscribe, events = func() (*client.Subscription, error) { return c.Subscribe(setupCtx(b), []string{"newHeads"}) }, c.Events()
						} else {
							sb, err := standby.Dial(setupCtx(b), url, spares, client.WithProtocol(ethereum.Protocol()))
							if err != nil {
								b.Fatal(err)
							}
							b.Cleanup(func() { _ = sb.Close() })
							subscribe, events = func() (*client.Subscription, error) { return sb.Subscribe(setupCtx(b), []string{"newHeads"}) }, sb.Events()
						}
						downs := countDisconnects(events)
						b.ReportAllocs()
						// The usage is read before the subscription, whose heads
						// the server sends at once: read after, it kept the
						// program's loop from its first heads (a few
						// milliseconds of reading /proc on a busy machine), and
						// the subscription's buffer overflowed before the loop
						// began (1,411-3,073 heads dropped in some standby runs).
						self, server := startUsage(os.Getpid(), ""), node.probe()
						b.ResetTimer()
						sub, err := subscribe()
						if err != nil {
							b.Fatal(err)
						}
						received, dups := 0, 0
						var last []byte
						for received+int(sub.Dropped()) < b.N {
							m, ok := <-sub.C()
							if !ok {
								b.Fatalf("subscription ended after %d messages", received)
							}
							if string(m.Data) == string(last) {
								dups++
							}
							last = m.Data
							received++
						}
						time.Sleep(settle) // the trailing leg's copies are work too
						b.StopTimer()
						self.report(b, b.N)
						server.report(b, b.N)
						ReportRate(b, b.N, "msg/s")
						b.ReportMetric(float64(b.N-received)/float64(b.N), "dropped/op")
						b.ReportMetric(float64(dups)/float64(b.N), "dup/op")
						b.ReportMetric(float64(downs()), "disconnects")
					})
				}
			}
		})
	}
}

// countDisconnects counts the Disconnected events on events (a leg's
// reconnect, which has the server blast that leg's chain from its start
// again) on a goroutine of its own until events is closed; the function
// it returns reads the count so far.
func countDisconnects(events <-chan client.Event) func() int64 {
	var n atomic.Int64
	go func() {
		for ev := range events {
			if ev.Kind == client.Disconnected {
				n.Add(1)
			}
		}
	}()
	return n.Load
}

// TestStandbyBlastEveryHeadOnce runs BenchmarkStandbyBlast's standby as a
// test, in both modes and both feeds: two legs read the same chain of
// heads, and the merged stream has every head exactly once, in order,
// none dropped (its buffer holds the whole chain). The legs ping
// rarely: a pong waits behind the blast, and a leg that gave up on it
// would subscribe again, and its fresh blast start the chain over.
func TestStandbyBlastEveryHeadOnce(t *testing.T) {
	for _, srv := range nodeServers {
		t.Run("server="+srv.name, func(t *testing.T) {
			node := srv.start(t)
			for _, feed := range []struct {
				name, every string
				n           int
			}{{"blast", "0", 20000}, {"20k", "50us", 2000}} {
				t.Run("feed="+feed.name, func(t *testing.T) {
					ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
					defer cancel()
					url := fmt.Sprintf("%s/blast?n=%d&chain=1&every=%s", node.base, feed.n, feed.every)
					sb, err := standby.Dial(ctx, url, 1, client.WithProtocol(ethereum.Protocol()),
						client.WithPing(time.Minute, time.Minute))
					if err != nil {
						t.Fatal(err)
					}
					defer func() { _ = sb.Close() }()
					sub, err := sb.Subscribe(ctx, []string{"newHeads"}, client.Buffer(feed.n))
					if err != nil {
						t.Fatal(err)
					}
					var want []byte
					for i := range feed.n {
						var m client.Message
						select {
						case m = <-sub.C():
						case <-ctx.Done():
							t.Fatalf("head %d never delivered (%d dropped)", i, sub.Dropped())
						}
						if want = chainFrame(want[:0], i); !bytes.Contains(want, m.Data) {
							t.Fatalf("head %d (flags %v) is %.200s", i, m.Flags, m.Data)
						}
					}
					if d := sub.Dropped(); d != 0 {
						t.Errorf("%d heads dropped", d)
					}
				})
			}
		})
	}
}
