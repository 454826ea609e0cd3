package reliability_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/wsfan/wsfan/internal/faultproxy"
	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/standby"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// BenchmarkStandbyJitter is a hot standby's latency against each of its
// legs alone: one exchange, two Toxiproxy proxies in front of it, each
// delaying what it forwards 20 ms ± 10 (drawn independently), and a feed
// of one message a millisecond. impl=leg0 and impl=leg1 read through one
// proxy (client.Dial); impl=merged reads both (standby.Dial, the
// second proxy its standby's endpoint), each message delivered at its
// first arrival. p50-ms and p99-ms are from publish to delivery.
func BenchmarkStandbyJitter(b *testing.B) {
	const topic = "ticker.BTC-PERPETUAL.raw"
	exch := exchangetest.NewServer(thalex.Name)
	b.Cleanup(exch.Close)
	var urls []string
	for range 2 {
		p := faultproxy.Start(b, exch.Addr())
		p.Jitter(20*time.Millisecond, 10*time.Millisecond)
		urls = append(urls, p.URL(exch.URL()))
	}
	for _, impl := range []string{"leg0", "leg1", "merged"} {
		b.Run("impl="+impl, func(b *testing.B) {
			ctx := testutil.Context(b)
			opts := []client.Option{client.WithProtocol(thalex.Protocol())}
			var sub *client.Subscription
			legs := 1
			switch impl {
			case "merged":
				legs = 2
				sb, err := standby.Dial(ctx, urls[0], 1, append(opts, client.WithEndpoints(urls[1]))...)
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { _ = sb.Close() })
				if sub, err = sb.Subscribe(ctx, []string{topic}); err != nil {
					b.Fatal(err)
				}
			default:
				c, err := client.Dial(ctx, urls[map[string]int{"leg0": 0, "leg1": 1}[impl]], opts...)
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { _ = c.Close() })
				if sub, err = c.Subscribe(ctx, []string{topic}); err != nil {
					b.Fatal(err)
				}
			}
			if err := exch.WaitSubscribers(ctx, topic, legs); err != nil {
				b.Fatal(err)
			}
			latencies := make([]time.Duration, 0, b.N)
			done := make(chan struct{})
			go func() {
				defer close(done)
				for m := range sub.C() {
					var p struct{ At int64 }
					if json.Unmarshal(m.Data, &p) == nil {
						latencies = append(latencies, time.Since(time.Unix(0, p.At)))
					}
					if len(latencies) == b.N {
						return
					}
				}
			}()
			b.ResetTimer()
			for n := range b.N {
				exch.Publish(topic, fmt.Appendf(nil, `{"n":%d,"at":%d}`, n, time.Now().UnixNano()))
				sleep(ctx, time.Millisecond)
			}
			select {
			case <-done:
			case <-ctx.Done():
				b.Fatalf("%d of %d messages", len(latencies), b.N)
			}
			b.StopTimer()
			slices.Sort(latencies)
			at := func(q float64) float64 {
				return float64(latencies[int(q*float64(len(latencies)-1))]) / float64(time.Millisecond)
			}
			b.ReportMetric(at(0.50), "p50-ms")
			b.ReportMetric(at(0.99), "p99-ms")
			if err := exch.WaitSubscribers(ctx, topic, legs); err != nil { // still every leg's
				b.Fatal(err)
			}
		})
	}
}
