package reliability_test

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wsfan/wsfan/internal/faultproxy"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// BenchmarkFailover is a single connection's failover between two
// endpoints (client.WithEndpoints), without a hot standby: a feed of one
// message a millisecond runs while the endpoint in use fails (Toxiproxy
// in front of each: reset_peer, noticed at once; a blackhole, noticed by
// the liveness pings), and an op is one failover, from the fault to the
// first message delivered from the other endpoint (ms-p50, ms-max). The
// failed endpoint is healed after, and the next op fails the other one.
func BenchmarkFailover(b *testing.B) {
	for _, fault := range []string{"reset_peer", "blackhole"} {
		b.Run("fault="+fault, func(b *testing.B) {
			const topic = "ticker.BTC-PERPETUAL.raw"
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // a blackhole takes seconds an op
			b.Cleanup(cancel)
			exch := exchangetest.NewServer(thalex.Name)
			b.Cleanup(exch.Close)
			proxies := []*faultproxy.Proxy{faultproxy.Start(b, exch.Addr()), faultproxy.Start(b, exch.Addr())}
			c, err := client.Dial(ctx, proxies[0].URL(exch.URL()), client.WithProtocol(thalex.Protocol()),
				client.WithEndpoints(proxies[1].URL(exch.URL())))
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = c.Close() })
			sub, err := c.Subscribe(ctx, []string{topic})
			if err != nil {
				b.Fatal(err)
			}
			stop := make(chan struct{})
			fed := make(chan struct{})
			go func() { // the feed
				defer close(fed)
				for n := 0; ; n++ {
					select {
					case <-stop:
						return
					case <-time.After(time.Millisecond):
					}
					exch.Publish(topic, fmt.Appendf(nil, `{"n":%d}`, n))
				}
			}()
			var back atomic.Int64 // when the first message after the last fault came, UnixNano
			go func() {
				for m := range sub.C() {
					if m.Reconnected() {
						back.CompareAndSwap(0, m.RecvTime.UnixNano())
					}
				}
			}()
			var took []time.Duration
			b.ResetTimer()
			for i := range b.N {
				_, at := c.Endpoint()
				p := proxies[at]
				back.Store(0)
				start := time.Now()
				cut(p, fault)
				for back.Load() == 0 {
					if ctx.Err() != nil {
						b.Fatalf("failover %d: no message from the other endpoint", i)
					}
					time.Sleep(time.Millisecond)
				}
				took = append(took, time.Unix(0, back.Load()).Sub(start))
				p.Heal()
				if _, now := c.Endpoint(); now == at {
					b.Fatalf("failover %d: still on endpoint %d", i, at)
				}
			}
			b.StopTimer()
			close(stop)
			<-fed
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2])/float64(time.Millisecond), "ms-p50")
			b.ReportMetric(float64(took[len(took)-1])/float64(time.Millisecond), "ms-max")
		})
	}
}
