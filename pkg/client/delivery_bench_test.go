package client_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/ethereum"
	"github.com/wsfan/wsfan/pkg/exchangetest"
)

// newHeads is an Ethereum newHeads payload; the eth_subscription frame
// around it is about 615 bytes.
var newHeads = []byte(`{"parentHash":"0x` + strings.Repeat("1a", 32) + `","miner":"0x` + strings.Repeat("2b", 20) +
	`","stateRoot":"0x` + strings.Repeat("3c", 32) + `","transactionsRoot":"0x` + strings.Repeat("4d", 32) +
	`","number":"0x1406f40","gasLimit":"0x1c9c380","gasUsed":"0xe4e1c0","timestamp":"0x6789a3c0","baseFeePerGas":"0x3b9aca00","hash":"0x` +
	strings.Repeat("5e", 32) + `"}`)

// BenchmarkNotifyDelivery blasts b.N newHeads notifications from a test
// node on loopback at a consumer that only counts them, and reports how
// many the subscription dropped (run with -benchtime=300000x to match
// issue 9's blast). With default options the goal is 0 dropped: a
// consumer that keeps up must not lose messages. Block is the lossless
// reference rate.
func BenchmarkNotifyDelivery(b *testing.B) {
	for _, bc := range []struct {
		name string
		opts []client.SubscribeOption
	}{
		{"default", nil},
		{"block", []client.SubscribeOption{client.Overflow(client.Block)}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			srv := exchangetest.NewServer(ethereum.Name)
			defer srv.Close()
			c, err := client.Dial(ctx, srv.URL(), client.WithProtocol(ethereum.Protocol()))
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			sub, err := c.Subscribe(ctx, []string{"newHeads"}, bc.opts...)
			if err != nil {
				b.Fatal(err)
			}
			if err := srv.WaitSubscribers(ctx, "newHeads", 1); err != nil {
				b.Fatal(err)
			}
			n := uint64(b.N)
			done := make(chan uint64)
			go func() {
				var got uint64
				for m := range sub.C() {
					got++
					if m.Seq == n {
						break
					}
				}
				done <- got
			}()
			b.SetBytes(int64(len(newHeads)))
			b.ResetTimer()
			for range b.N {
				if srv.Publish("newHeads", newHeads) != 1 {
					b.Fatal("published to no connection")
				}
			}
			got := <-done
			b.StopTimer()
			if got+sub.Dropped() != n {
				b.Fatalf("received %d + dropped %d != sent %d", got, sub.Dropped(), n)
			}
			b.ReportMetric(float64(sub.Dropped()), "dropped")
		})
	}
}
