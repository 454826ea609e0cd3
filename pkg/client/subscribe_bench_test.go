package client_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// BenchmarkSubscribeEachOnLoopback times the client's subscribe
// primitive (subscribeGroups: admit, send, settle) on loopback through
// its public wrapper: SubscribeEach of 10 topics the client does not
// hold (one parse each, one batched request, its answer), then
// UnsubscribeEach of them; an op is the pair.
func BenchmarkSubscribeEachOnLoopback(b *testing.B) {
	srv := exchangetest.NewServer(thalex.Name)
	defer srv.Close()
	ctx := context.Background()
	c, err := client.Dial(ctx, srv.URL(), client.WithProtocol(thalex.Protocol(thalex.WithNotices(false))),
		client.WithRateLimit(client.RateLimit{Rate: 1e9, Burst: 1 << 30})) // the loop, not the venue's pace
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	topics := make([]string, 10)
	for i := range topics {
		topics[i] = fmt.Sprintf("ticker.T%d-PERPETUAL.raw", i)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		subs, errs, err := c.SubscribeEach(ctx, topics)
		if err != nil {
			b.Fatal(err)
		}
		for _, e := range errs {
			if e != nil {
				b.Fatal(e)
			}
		}
		if err := c.UnsubscribeEach(ctx, subs); err != nil {
			b.Fatal(err)
		}
	}
}
