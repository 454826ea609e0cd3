package reliability_test

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/faultproxy"
	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/deribit"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// standbyCase is a venue's topic and the n-th message of a steady feed
// on it, carrying the venue's own identity (or none, Thalex); repeats
// when the topic may carry the same message twice (not a book, whose
// chain a repeated change breaks).
type standbyCase struct {
	dialect string
	proto   protocol.Protocol
	topic   string
	message func(n int) string
	repeats bool
}

var standbyCases = []standbyCase{
	{thalex.Name, thalex.Protocol(), "ticker.BTC-PERPETUAL.raw",
		func(n int) string { return fmt.Sprintf(`{"mark_price":%d}`, 60000+n) }, true},
	{deribit.Name, deribit.Protocol(), "book.BTC-PERPETUAL.100ms",
		func(n int) string {
			return fmt.Sprintf(`{"type":"change","change_id":%d,"prev_change_id":%d,"bids":[],"asks":[]}`, 1000+n, 999+n)
		}, false},
}

// With a hot standby, a steady feed reaches the program whole while the
// leading leg dies under it (Toxiproxy cuts it: reset_peer, or the proxy
// down): nothing lost, nothing twice, nothing out of order, and no
// message flagged as after a hole. Where a topic may carry the same
// message twice, a payload sent twice on purpose is delivered twice.
func TestStandbyLosesNothingWhenALegDies(t *testing.T) {
	for _, tc := range standbyCases {
		for _, fault := range []string{"reset_peer", "down"} {
			t.Run(tc.dialect+"/"+fault, func(t *testing.T) { runStandby(t, tc, fault) })
		}
	}
}

func runStandby(t *testing.T, tc standbyCase, fault string) {
	const total, faultAt, standby = 600, 200, 1
	want := total
	if tc.repeats {
		want += 2
	}
	ctx := testutil.Context(t)
	exch := exchangetest.NewServer(exchangetest.Dialect(tc.dialect))
	t.Cleanup(exch.Close)
	proxy := faultproxy.Start(t, exch.Addr())
	sb, err := client.DialStandby(ctx, proxy.URL(exch.URL()), standby,
		client.WithProtocol(tc.proto), client.WithEndpoints(exch.URL()))
	require.NoError(t, err)
	t.Cleanup(func() { _ = sb.Close() })
	sub, err := sb.Subscribe(ctx, []string{tc.topic})
	require.NoError(t, err)
	require.NoError(t, exch.WaitSubscribers(ctx, tc.topic, 1+standby), "one subscription a leg")

	var got []string
	flagged := 0
	received := make(chan struct{})
	go func() { // the program
		defer close(received)
		for len(got) < want {
			select {
			case m := <-sub.C():
				got = append(got, string(m.Data))
				if m.Reconnected() || m.Gap() {
					flagged++
				}
			case <-ctx.Done():
				return
			}
		}
	}()
	for n := range total { // Toxiproxy's methods run on the test's goroutine
		if n == faultAt {
			cut(proxy, fault)
		}
		exch.Publish(tc.topic, []byte(tc.message(n)))
		sleep(ctx, 500*time.Microsecond)
	}
	if tc.repeats {
		exch.Publish(tc.topic, []byte(tc.message(total))) // the same twice, on purpose
		exch.Publish(tc.topic, []byte(tc.message(total)))
	}
	<-received
	require.Equal(t, want, len(got), "every message reached the program")
	for n := range total {
		require.Equal(t, tc.message(n), got[n], "message %d: in order, once, none lost", n)
	}
	if tc.repeats {
		assert.Equal(t, tc.message(total), got[total], "a payload sent twice is delivered twice")
		assert.Equal(t, tc.message(total), got[total+1])
	}
	assert.Zero(t, flagged, "no hole is marked: the other leg carried the feed")
	select {
	case m := <-sub.C():
		t.Fatalf("a message delivered twice: %s", m.Data)
	case <-time.After(100 * time.Millisecond):
	}
	legs := sb.Legs()
	assert.Equal(t, client.StateConnected, legs[1].State(), "the clean leg stayed up")
}

// cut makes the fault on the proxied leg.
func cut(p *faultproxy.Proxy, fault string) {
	switch fault {
	case "reset_peer":
		p.ResetPeer()
	case "down":
		p.Down()
	default:
		panic("unknown fault " + strconv.Quote(fault))
	}
}
