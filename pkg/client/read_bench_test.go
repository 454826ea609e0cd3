package client_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/deribit"
	"github.com/wsfan/wsfan/pkg/ethereal"
	"github.com/wsfan/wsfan/pkg/ethereum"
	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// thalexTicker is a Thalex ticker notification as the exchange sends it.
var thalexTicker = []byte(`{"channel_name":"ticker.BTC-PERPETUAL.raw","notification":{"best_bid_price":68012.5,"best_bid_amount":1.25,"best_ask_price":68013.0,"best_ask_amount":0.4,"last_price":68012.5,"mark_price":68012.81,"mark_timestamp":1737043200.123456,"iv":0.0,"delta":1.0,"volume_24h":12504.22,"value_24h":850304112.5,"low_price_24h":66850.0,"high_price_24h":68420.5,"change_24h":1.84,"index":68009.74,"forward":68011.2,"funding_mark":0.00001234,"funding_rate":0.0000125,"collar_low":66652.1,"collar_high":69373.5,"realised_funding_24h":0.00031,"average_funding_rate_24h":0.0000129,"open_interest":8421.7}}`)

// BenchmarkRouteTicker times what the reader does with one Thalex ticker
// frame: classify it by scanning, look its topic up among n subscribed
// topics and deliver it to the subscription's channel. The Thalex Rust SDK
// reports 491-502 ns for the same step (handle_incoming, ticker with 1-100
// subscriptions) and 959 ns with one subscription. The consumer's side
// (draining the channel) runs with the timer stopped, every drainEvery
// frames; BenchmarkRouteTickerConsumed counts it too.
func BenchmarkRouteTicker(b *testing.B) {
	for _, n := range []int{1, 10, 50, 100} {
		b.Run(fmt.Sprintf("subs=%d", n), func(b *testing.B) { routeTicker(b, n, drainEvery) })
	}
}

// drainEvery is how many frames BenchmarkRouteTicker routes between
// drains: the channel's slots, so every frame goes straight into the
// channel (BenchmarkRouteTickerBehind measures the buffer beside it).
const drainEvery = 64

// BenchmarkRouteTickerBehind routes 512 frames between drains to one of
// 100 topics: past the channel's 64 slots, the rest of the buffer (grown
// while the consumer is behind, let go once it caught up) and the mover
// goroutine handing it into the channel are part of the cost.
func BenchmarkRouteTickerBehind(b *testing.B) { routeTicker(b, 100, 512) }

// routeTicker routes tickers to one of n subscribed topics, draining its
// subscription every drain frames with the timer stopped.
func routeTicker(b *testing.B, n, drain int) {
	c := client.NewBenchClient(thalex.Protocol(thalex.WithNotices(false)))
	cn := client.NewBenchConn(c)
	for i := 1; i < n; i++ {
		c.SubscribeLocal(fmt.Sprintf("ticker.I%d-PERPETUAL.raw", i))
	}
	sub := c.SubscribeLocal("ticker.BTC-PERPETUAL.raw")
	now := time.Now()
	b.SetBytes(int64(len(thalexTicker)))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		cn.HandleFrame(thalexTicker, now)
		if i++; i == drain {
			b.StopTimer()
			for range i {
				<-sub.C()
			}
			i = 0
			b.StartTimer()
		}
	}
	for range i { // what waits, so a mover ends
		<-sub.C()
	}
	if sub.Dropped() != 0 || c.DeliveredTotal() == 0 {
		b.Fatalf("delivered %d, dropped %d", c.DeliveredTotal(), sub.Dropped())
	}
}

// BenchmarkRouteTickerConsumed is BenchmarkRouteTicker with 100 topics and
// the consumer's receive inside the timed loop.
func BenchmarkRouteTickerConsumed(b *testing.B) {
	c := client.NewBenchClient(thalex.Protocol(thalex.WithNotices(false)))
	cn := client.NewBenchConn(c)
	for i := 1; i < 100; i++ {
		c.SubscribeLocal(fmt.Sprintf("ticker.I%d-PERPETUAL.raw", i))
	}
	sub := c.SubscribeLocal("ticker.BTC-PERPETUAL.raw")
	now := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		cn.HandleFrame(thalexTicker, now)
		<-sub.C()
	}
}

// BenchmarkRouteTickerUnsubscribed is a ticker for no subscribed topic:
// classified, looked up, counted and dropped.
func BenchmarkRouteTickerUnsubscribed(b *testing.B) {
	c := client.NewBenchClient(thalex.Protocol(thalex.WithNotices(false)))
	cn := client.NewBenchConn(c)
	c.SubscribeLocal("ticker.ETH-PERPETUAL.raw")
	now := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		cn.HandleFrame(thalexTicker, now)
	}
}

// BenchmarkResolveResponse times the reader handing an RPC response to
// its caller with n calls pending (Thalex Rust SDK: 325-333 ns).
func BenchmarkResolveResponse(b *testing.B) {
	for _, n := range []int{1, 10, 50, 100} {
		b.Run(fmt.Sprintf("pending=%d", n), func(b *testing.B) {
			c := client.NewBenchClient(thalex.Protocol(thalex.WithNotices(false)))
			cn := client.NewBenchConn(c)
			for i := 0; i < n-1; i++ {
				cn.Pend(uint64(1_000_000+i), client.NewBenchCall())
			}
			frame := []byte(`{"id":42,"result":{"instrument_name":"BTC-PERPETUAL","price":68012.5}}`)
			p := client.NewBenchCall()
			now := time.Now()
			b.ReportAllocs()
			for b.Loop() {
				cn.Pend(42, p)
				cn.HandleFrame(frame, now)
				p.Wait()
			}
		})
	}
}

// BenchmarkEncodeRequest times encoding one request into a reused buffer.
func BenchmarkEncodeRequest(b *testing.B) {
	p := thalex.Protocol(thalex.WithNotices(false))
	params := []byte(`{"instrument_name":"BTC-PERPETUAL","direction":"buy","amount":0.1,"price":68000}`)
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for b.Loop() {
		buf, _ = p.AppendRequest(buf[:0], 1234567, "private/insert", params)
	}
}

// BenchmarkSubscribeFrame100 builds the batched subscribe frame for 100
// topics from their cached payloads, as a reconnect does.
func BenchmarkSubscribeFrame100(b *testing.B) {
	for _, p := range []protocol.Protocol{thalex.Protocol(thalex.WithNotices(false)), deribit.Protocol(), ethereum.Protocol(), ethereal.Protocol()} {
		b.Run(p.Name(), func(b *testing.B) {
			topics := make([]*protocol.Topic, 100)
			for i := range topics {
				name := fmt.Sprintf("ticker.I%d-PERPETUAL.raw", i)
				switch p.Name() {
				case "ethereum":
					name = fmt.Sprintf(`["logs",{"address":"0x%040x"}]`, i)
				case "ethereal":
					name = fmt.Sprintf("L2Book:SYM%dUSD", i)
				}
				t, err := p.NewTopic(name)
				if err != nil {
					b.Fatal(err)
				}
				topics[i] = t
			}
			var id uint64
			next := func() uint64 { id++; return id }
			var batch protocol.Batch
			b.ReportAllocs()
			for b.Loop() {
				batch.Reset()
				p.Subscribe(&batch, topics, next, 0)
			}
			b.ReportMetric(float64(len(batch.Messages)), "frames")
		})
	}
}
