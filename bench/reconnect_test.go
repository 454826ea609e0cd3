package bench

import (
	"fmt"
	"testing"
	"time"

	"github.com/cenkalti/backoff/v4"

	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// BenchmarkReconnect drops the connection of a client subscribed to n
// Thalex channels and waits until every channel is restored (the
// Resubscribed event): dial, handshake and one batched subscribe, with
// the reconnect backoff set to zero so only the work is timed (Thalex SDK
// estimate for 10 channels: ~300 ms, their target ~50 ms).
func BenchmarkReconnect(b *testing.B) {
	for _, n := range []int{10, 100} {
		b.Run(fmt.Sprintf("channels=%d", n), func(b *testing.B) {
			srv := exchangetest.NewServer(thalex.Name)
			b.Cleanup(srv.Close)
			c := dialWsfan(b, srv, client.WithBackoff(func() backoff.BackOff { return &backoff.ZeroBackOff{} }))
			sub, err := c.Subscribe(setupCtx(b), topicNames(thalex.Protocol(), n))
			if err != nil {
				b.Fatal(err)
			}
			defer func() { _ = sub.Unsubscribe(setupCtx(b)) }()
			lat := NewLatencies(b.N)
			b.ReportAllocs()
			for b.Loop() {
				start := time.Now()
				srv.DropConnections()
				waitEvent(b, c, client.Resubscribed)
				lat.Add(time.Since(start))
				srv.ResetReceived()
			}
			lat.Report(b)
		})
	}
}

// waitEvent reads c's events until one of kind arrives.
func waitEvent(b *testing.B, c *client.Client, kind client.EventKind) {
	timeout := time.NewTimer(setupTimeout)
	defer timeout.Stop()
	for {
		select {
		case ev, ok := <-c.Events():
			if !ok {
				b.Fatal("client closed")
			}
			if ev.Kind == kind {
				return
			}
		case <-timeout.C:
			b.Fatalf("no %v event within %v", kind, setupTimeout)
		}
	}
}
