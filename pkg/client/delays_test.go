package client_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/clock"
	"github.com/wsfan/wsfan/internal/latency"
	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/deribit"
)

// TestUpstreamDelayHistogram: on a fake clock, a venue stamping every
// message 50 ms before the client reads it is observed at exactly 50 ms
// in wsfan_upstream_delay_seconds under the topic's family, for the
// topic's first message and one in 8 after it (each topic sampled on its
// own); stamping 50 ms ahead counts every message in
// wsfan_clock_skew_total, observes the sampled ones at -50 ms, and
// delivers every message.
func TestUpstreamDelayHistogram(t *testing.T) {
	clk := clock.NewFake(time.UnixMilli(1737043200123))
	srv := newServer(t, deribit.Name)
	reg := prometheus.NewRegistry()
	c := dial(t, srv, deribit.Protocol(deribit.WithHeartbeat(0)),
		client.WithReadClock(clk.Now), client.WithStamps(), client.WithMetrics(reg, "venue"))
	const topic, other = "ticker.BTC-PERPETUAL.100ms", "ticker.ETH-PERPETUAL.100ms"
	sub, err := c.Subscribe(testutil.Context(t), []string{topic, other})
	require.NoError(t, err)

	send := func(topic string, i int, offset time.Duration) {
		venue := clk.Now().Add(offset)
		srv.Publish(topic, fmt.Appendf(nil, `{"timestamp":%d,"i":%d}`, venue.UnixMilli(), i))
		m := receive(t, sub)
		require.Equal(t, topic, m.Topic)
		require.JSONEq(t, fmt.Sprintf(`{"timestamp":%d,"i":%d}`, venue.UnixMilli(), i), string(m.Data))
		clk.Advance(time.Second)
	}
	for i := range 9 { // the 1st and the 9th observed
		send(topic, i, -50*time.Millisecond)
	}
	delay := reading(t, reg, "wsfan_upstream_delay_seconds", "connection=venue,family=ticker")
	require.EqualValues(t, 2, delay.Count)
	require.InDelta(t, 2*0.050, delay.Sum, 1e-9, "each observed at 50 ms")
	require.Zero(t, metric(t, reg, latency.SkewName, map[string]string{"connection": "venue", "path": "upstream"}))

	for i := range 8 { // every one delivered (send receives it); the 17th observed
		send(topic, 9+i, 50*time.Millisecond)
	}
	require.Equal(t, 8.0, metric(t, reg, latency.SkewName, map[string]string{"connection": "venue", "path": "upstream"}), "skew counted for every message")
	delay = reading(t, reg, "wsfan_upstream_delay_seconds", "connection=venue,family=ticker")
	require.EqualValues(t, 3, delay.Count)
	require.InDelta(t, 2*0.050-0.050, delay.Sum, 1e-9, "a stamp ahead observed negative, not clamped")

	send(other, 17, -50*time.Millisecond) // another topic's first: observed
	delay = reading(t, reg, "wsfan_upstream_delay_seconds", "connection=venue,family=ticker")
	require.EqualValues(t, 4, delay.Count)
	require.InDelta(t, 2*0.050, delay.Sum, 1e-9)
	// The reader counts a delivery after handing the message over: the
	// last may be read before it is counted.
	require.Eventually(t, func() bool {
		return metric(t, reg, "wsfan_client_delivered_total", map[string]string{"connection": "venue"}) == 18
	}, 5*time.Second, time.Millisecond, "every message delivered")
}

// reading is the series of histogram name whose labels read labels
// (latency.Reading.LabelString).
func reading(t *testing.T, reg prometheus.Gatherer, name, labels string) latency.Reading {
	t.Helper()
	rs, err := latency.Read(reg, name)
	require.NoError(t, err)
	for _, r := range rs {
		if r.LabelString() == labels {
			return r
		}
	}
	require.Failf(t, "no series", "%s{%s} in %v", name, labels, rs)
	return latency.Reading{}
}

// deribitTicker is a Deribit ticker notification, stamped.
var deribitTicker = []byte(`{"jsonrpc":"2.0","method":"subscription","params":{"channel":"ticker.BTC-PERPETUAL.100ms","data":{"timestamp":1737043200123,"stats":{"volume_usd":1.2e9,"volume":18000.5,"price_change":1.8,"low":66850.0,"high":68420.5},"state":"open","settlement_price":68011.2,"open_interest":8421.7,"min_price":66652.1,"max_price":69373.5,"mark_price":68012.81,"last_price":68012.5,"instrument_name":"BTC-PERPETUAL","index_price":68009.74,"funding_8h":0.0000125,"current_funding":0.0,"best_bid_price":68012.5,"best_bid_amount":1.25,"best_ask_price":68013.0,"best_ask_amount":0.4}}}`)

// BenchmarkRouteStamped is BenchmarkRouteTicker's one topic of a
// stamped Deribit ticker: plain, under WithStamps (the venue's stamp
// read), and under WithStamps and WithMetrics (its delay observed too).
func BenchmarkRouteStamped(b *testing.B) {
	for _, bc := range []struct {
		name string
		opts []client.Option
	}{
		{"plain", nil},
		{"stamps", []client.Option{client.WithStamps()}},
		{"stamps+metrics", []client.Option{client.WithStamps(), client.WithMetrics(prometheus.NewRegistry(), "bench")}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			c := client.NewBenchClient(deribit.Protocol(deribit.WithHeartbeat(0)), bc.opts...)
			cn := client.NewBenchConn(c)
			sub := c.SubscribeLocal("ticker.BTC-PERPETUAL.100ms")
			now := time.Now()
			b.SetBytes(int64(len(deribitTicker)))
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				cn.HandleFrame(deribitTicker, now)
				if i++; i == drainEvery {
					b.StopTimer()
					for range i {
						<-sub.C()
					}
					i = 0
					b.StartTimer()
				}
			}
			for range i {
				<-sub.C()
			}
		})
	}
}
