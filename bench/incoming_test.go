package bench

import (
	"fmt"
	"testing"

	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// The Thalex report's handle_incoming rows time one frame inside the
// client. pkg/client measures exactly that step in memory:
// BenchmarkRouteTicker/subs=1..100, BenchmarkRouteTickerUnsubscribed and
// BenchmarkResolveResponse/pending=1..100 (`make bench` runs them into
// the same results file). BenchmarkIncoming is the end-to-end version:
// the exchangetest server publishes the ticker over loopback and the
// benchmark goroutine receives it from Subscription.C(), with the client
// subscribed to n channels.

// BenchmarkIncoming/ticker/subs=N delivers Thalex tickers on one of N
// subscribed channels; subs=0 publishes tickers for a channel nobody
// subscribed (classified, looked up, counted and dropped) and times them
// by a last ticker on a subscribed channel.
func BenchmarkIncoming(b *testing.B) {
	data := FrameLarge[len(`{"channel_name":"ticker.BTC-PERPETUAL.raw","notification":`) : len(FrameLarge)-1]
	for _, n := range []int{1, 10, 50, 100} {
		b.Run(fmt.Sprintf("ticker/subs=%d", n), func(b *testing.B) {
			srv := exchangetest.NewServer(thalex.Name)
			b.Cleanup(srv.Close)
			c := dialWsfan(b, srv, client.Buffer(8192))
			topics := topicNames(thalex.Protocol(), n)
			sub, err := c.Subscribe(setupCtx(b), topics)
			if err != nil {
				b.Fatal(err)
			}
			topic := topics[n/2]
			if err := srv.WaitSubscribers(setupCtx(b), topic, 1); err != nil {
				b.Fatal(err)
			}
			var seq uint64
			b.SetBytes(int64(len(FrameLarge)))
			b.ReportAllocs()
			stream(b, b.N, func() { srv.Publish(topic, data) }, func(i int) {
				for seq < uint64(i) {
					m, ok := <-sub.C()
					if !ok {
						b.Fatal("subscription ended")
					}
					seq = m.Seq
				}
			})
			b.ReportMetric(float64(sub.Dropped())/float64(b.N), "dropped/op")
		})
	}
	b.Run("ticker/subs=0", func(b *testing.B) {
		srv := exchangetest.NewServer(thalex.Name)
		b.Cleanup(srv.Close)
		c := dialWsfan(b, srv)
		sub, err := c.Subscribe(setupCtx(b), []string{"ticker.ETH-PERPETUAL.raw"})
		if err != nil {
			b.Fatal(err)
		}
		if err := srv.WaitSubscribers(setupCtx(b), "ticker.ETH-PERPETUAL.raw", 1); err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(len(FrameLarge)))
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			srv.PublishRaw(FrameLarge) // ticker.BTC-PERPETUAL.raw: not subscribed
		}
		srv.Publish("ticker.ETH-PERPETUAL.raw", data)
		<-sub.C()
		b.StopTimer()
		ReportRate(b, b.N, "msg/s")
	})
}
