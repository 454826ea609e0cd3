package natstest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/latency"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/sidecar"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// Programs behind two sidecars of one NATS group, one leading, read the
// same venue stamp and the same receive stamp, the leader's, for each
// message: the leader's sidecar forwards its own, the member gets them in
// the Wsfan-Venue-Ns and Wsfan-Recv-Ns headers. The member observes the
// NATS hop in wsfan_nats_hop_delay_seconds, and its status shows it.
func TestStampsAcrossTheGroup(t *testing.T) {
	ns := startNATS(t)
	ex := exchange(t)
	regs := []*prometheus.Registry{prometheus.NewRegistry(), prometheus.NewRegistry()}
	var cars []*sidecarRig
	for i, name := range []string{"a", "b"} {
		cars = append(cars, startSidecar(t, ns.url(), "stamps", ex, name, func(c *sidecar.Config) { c.Registry = regs[i] }))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	const topic = "ticker.BTC-PERPETUAL.raw"
	var subs []*client.Subscription
	for _, car := range cars {
		require.Eventually(t, func() bool { return car.ready(t) }, 10*time.Second, 10*time.Millisecond, "/readyz once joined")
		c, err := client.Dial(ctx, "ws://"+car.addr+"/ws", client.WithProtocol(thalex.Protocol()), client.WithStamps())
		require.NoError(t, err)
		t.Cleanup(func() { _ = c.Close() })
		sub, err := c.Subscribe(ctx, []string{topic})
		require.NoError(t, err)
		subs = append(subs, sub)
	}

	// Publish until both programs read message i (each may join the
	// group's stream a moment after the other), then compare its stamps.
	recv := func(sub *client.Subscription, want string) (client.Message, bool) {
		wait := time.After(200 * time.Millisecond)
		for {
			select {
			case m := <-sub.C():
				if string(m.Data) == want {
					return m, true
				}
			case <-wait:
				return client.Message{}, false
			}
		}
	}
	var got [2]client.Message
	for i := 0; ; i++ {
		require.Less(t, i, 100, "the programs never read the same message")
		venue := time.UnixMilli(1737043200123 + int64(i))
		data := fmt.Sprintf(`{"time":%d.%03d,"i":%d}`, venue.Unix(), venue.UnixMilli()%1000, i)
		ex.Publish(topic, []byte(data))
		var ok [2]bool
		for j, sub := range subs {
			got[j], ok[j] = recv(sub, data)
		}
		if ok[0] && ok[1] {
			require.Equal(t, venue, got[0].ExchangeTime)
			require.Equal(t, venue, got[1].ExchangeTime, "the venue's stamp across the group")
			break
		}
	}
	require.False(t, got[0].UpstreamRecvTime.IsZero())
	require.Equal(t, got[0].UpstreamRecvTime, got[1].UpstreamRecvTime, "the leader's receive stamp, both sides")

	member := 0
	if g := cars[0].srv.Status().Upstream.Group; g != nil && g.Leader {
		member = 1
	}
	rs, err := latency.Read(regs[member], "wsfan_nats_hop_delay_seconds")
	require.NoError(t, err)
	require.Len(t, rs, 1)
	require.NotZero(t, rs[0].Count, "the member observed the hop")
	var hop []sidecar.DelayStatus
	for _, d := range cars[member].srv.Status().Delays {
		if d.Name == "wsfan_nats_hop_delay_seconds" {
			hop = append(hop, d)
		}
	}
	require.Len(t, hop, 1, "the member's /v1/status shows the hop")
	require.Equal(t, rs[0].Count, hop[0].Count)
	require.Equal(t, rs[0].P99, hop[0].P99)
}
