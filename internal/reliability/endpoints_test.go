package reliability_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/faultproxy"
	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/standby"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// A Standby's legs start on distinct endpoints (leg i on endpoint i of
// the list standby.Dial was given), and a leg that failed over to
// another's comes back to its own once it answers probes, so the legs
// are on distinct endpoints again; each leg reports its endpoint's index
// in that shared list (a leg's own list starts at its own endpoint, and
// leg 1 on endpoint 1 read 0, on endpoint 0 read 1).
func TestStandbyLegsOnDistinctEndpointsAfterAFailoverAndBack(t *testing.T) {
	ctx := testutil.Context(t)
	exch := exchangetest.NewServer(thalex.Name)
	t.Cleanup(exch.Close)
	p0, p1 := faultproxy.Start(t, exch.Addr()), faultproxy.Start(t, exch.Addr())
	const topic = "ticker.BTC-PERPETUAL.raw"
	sb, err := standby.Dial(ctx, p0.URL(exch.URL()), 1, client.WithProtocol(thalex.Protocol()),
		client.WithEndpoints(p1.URL(exch.URL())), client.WithSwitchBack(20*time.Millisecond, 200*time.Millisecond),
		client.WithReconnectWait(10*time.Millisecond, 50*time.Millisecond))
	require.NoError(t, err)
	t.Cleanup(func() { _ = sb.Close() })
	_, err = sb.Subscribe(ctx, []string{topic})
	require.NoError(t, err)
	require.NoError(t, exch.WaitSubscribers(ctx, topic, 2))
	endpoints := func() []int {
		var at []int
		for _, c := range sb.Legs() {
			_, i := c.Endpoint()
			at = append(at, i)
		}
		return at
	}
	connected := func() bool {
		for _, c := range sb.Legs() {
			if c.State() != client.StateConnected {
				return false
			}
		}
		return true
	}
	until := func(what string, cond func() bool) {
		t.Helper()
		for !cond() {
			require.NoError(t, ctx.Err(), what)
			sleep(ctx, 5*time.Millisecond)
		}
	}
	require.Equal(t, []int{0, 1}, endpoints(), "leg i starts on endpoint i")

	p1.Down()
	until("leg 1 on endpoint 0", func() bool { return connected() && endpoints()[1] == 0 })
	require.Equal(t, []int{0, 0}, endpoints(), "leg 1 failed over to endpoint 0")

	p1.Heal()
	until("leg 1 back on endpoint 1", func() bool { return connected() && endpoints()[1] == 1 })
	require.Equal(t, []int{0, 1}, endpoints(), "the legs are on distinct endpoints again")
}
