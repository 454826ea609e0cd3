package reliability_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/faultproxy"
	"github.com/wsfan/wsfan/internal/sidecartest"
	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/deribit"
	"github.com/wsfan/wsfan/pkg/ethereal"
	"github.com/wsfan/wsfan/pkg/ethereum"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/okx"
	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/sidecar"
	"github.com/wsfan/wsfan/pkg/standby"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// standbyCase is a venue's topic and the n-th message of a steady feed
// on it, carrying the venue's own identity (or none, Thalex); repeats
// when the topic may carry the same message twice (not a book or a
// chain, which a repeated message breaks).
type standbyCase struct {
	name    string
	dialect string
	proto   protocol.Protocol
	topic   string
	message func(n int) string
	repeats bool
}

var standbyCases = []standbyCase{
	{"thalex/ticker", thalex.Name, thalex.Protocol(), "ticker.BTC-PERPETUAL.raw",
		func(n int) string { return fmt.Sprintf(`{"mark_price":%d}`, 60000+n) }, true},
	{"deribit/book", deribit.Name, deribit.Protocol(), "book.BTC-PERPETUAL.100ms",
		func(n int) string {
			return fmt.Sprintf(`{"type":"change","change_id":%d,"prev_change_id":%d,"bids":[],"asks":[]}`, 1000+n, 999+n)
		}, false},
	{"deribit/ticker", deribit.Name, deribit.Protocol(), "ticker.BTC-PERPETUAL.100ms",
		func(n int) string { return fmt.Sprintf(`{"timestamp":%d,"n":%d}`, 1700000000000+n, n) }, true},
	{"ethereal/book", ethereal.Name, ethereal.Protocol(), "L2Book:BTCUSD",
		func(n int) string {
			return fmt.Sprintf(`{"s":"BTCUSD","t":%d,"pt":%d,"b":[],"a":[]}`, 1700000000000+n, 1699999999999+n)
		}, false},
	{"okx/book", okx.Name, okx.Protocol(), "books:BTC-USDT",
		func(n int) string {
			return fmt.Sprintf(`[{"asks":[],"bids":[],"ts":"%d","checksum":0,"prevSeqId":%d,"seqId":%d}]`, 1700000000000+n, 122+3*n, 125+3*n)
		}, false},
	{"okx/trades", okx.Name, okx.Protocol(), "trades:BTC-USDT",
		func(n int) string {
			return fmt.Sprintf(`[{"instId":"BTC-USDT","tradeId":"%d","px":"1","sz":"1","side":"buy","ts":"1","count":"1","source":"0","seqId":7}]`, 130639000+n)
		}, true},
	{"ethereum/newHeads", ethereum.Name, ethereum.Protocol(), "newHeads",
		func(n int) string {
			return fmt.Sprintf(`{"number":"0x%x","hash":"0x%064x","parentHash":"0x%064x"}`, 100+n, 101+n, 100+n)
		}, false},
}

// With a hot standby, a steady feed reaches the program whole while the
// leading leg fails under it (Toxiproxy cuts it with reset_peer or the
// proxy down, silences it with a blackhole, or delays it 200 ms ± 100):
// nothing lost, nothing twice, nothing out of order, and no
// message flagged as after a hole. Where a topic may carry the same
// message twice, a payload sent twice on purpose is delivered twice.
func TestStandbyLosesNothingWhenALegDies(t *testing.T) {
	for _, tc := range standbyCases {
		for _, fault := range []string{"reset_peer", "down", "blackhole", "latency"} {
			t.Run(tc.name+"/"+fault, func(t *testing.T) { runStandby(t, tc, fault) })
		}
	}
}

func runStandby(t *testing.T, tc standbyCase, fault string) {
	const total, faultAt, spares = 600, 200, 1
	want := total
	if tc.repeats {
		want += 2
	}
	ctx := testutil.Context(t)
	exch := exchangetest.NewServer(exchangetest.Dialect(tc.dialect))
	t.Cleanup(exch.Close)
	proxy := faultproxy.Start(t, exch.Addr())
	sb, err := standby.Dial(ctx, proxy.URL(exch.URL()), spares,
		client.WithProtocol(tc.proto), client.WithEndpoints(exch.URL()))
	require.NoError(t, err)
	t.Cleanup(func() { _ = sb.Close() })
	sub, err := sb.Subscribe(ctx, []string{tc.topic})
	require.NoError(t, err)
	require.NoError(t, exch.WaitSubscribers(ctx, tc.topic, 1+spares), "one subscription a leg")

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
	for n := range total { // an Ethereal message is the whole frame, the payload inside
		require.Contains(t, got[n], tc.message(n), "message %d: in order, once, none lost", n)
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
	case "blackhole":
		p.Blackhole()
	case "latency":
		p.Jitter(200*time.Millisecond, 100*time.Millisecond)
	default:
		panic("unknown fault " + strconv.Quote(fault))
	}
}

// sidecarCase is a venue's topic behind the sidecar: how a program
// subscribes to it, and the n-th message of a steady feed on it, which
// carries its n.
type sidecarCase struct {
	dialect   string
	topic     string
	subscribe string
	message   func(n int) string
}

var sidecarCases = []sidecarCase{
	{deribit.Name, "ticker.BTC-PERPETUAL.100ms",
		`{"jsonrpc":"2.0","id":1,"method":"public/subscribe","params":{"channels":["ticker.BTC-PERPETUAL.100ms"]}}`,
		func(n int) string { return fmt.Sprintf(`{"timestamp":%d,"n":%d}`, 1700000000000+n, n) }},
	{ethereal.Name, "Ticker:BTCUSD",
		`{"event":"subscribe","data":{"type":"Ticker","symbol":"BTCUSD"}}`,
		func(n int) string { return fmt.Sprintf(`{"s":"BTCUSD","t":%d,"n":%d}`, 1700000000000+n, n) }},
	{ethereum.Name, "newHeads",
		`{"jsonrpc":"2.0","id":1,"method":"eth_subscribe","params":["newHeads"]}`,
		func(n int) string {
			return fmt.Sprintf(`{"number":"0x%x","hash":"0x%064x","parentHash":"0x%064x","n":%d}`, 100+n, 101+n, 100+n, n)
		}},
}

// Behind a sidecar with a hot standby (-hot-standby 1), 50 local programs
// read a steady feed while the leading upstream connection fails
// (Toxiproxy: reset_peer, down, blackhole, 200 ms ± 100 latency): each
// gets every message once, in order, and no gap notice: the sidecar is
// as transparent to the failure as the merged stream is. Deribit,
// Ethereal and Ethereum topics.
func TestSidecarHotStandbyLosesNothing(t *testing.T) {
	for _, tc := range sidecarCases {
		for _, fault := range []string{"reset_peer", "down", "blackhole", "latency"} {
			t.Run(tc.dialect+"/"+fault, func(t *testing.T) { runSidecarStandby(t, tc, fault) })
		}
	}
}

func runSidecarStandby(t *testing.T, tc sidecarCase, fault string) {
	const total, faultAt, programs = 600, 200, 50
	ctx := testutil.Context(t)
	exch := exchangetest.NewServer(exchangetest.Dialect(tc.dialect))
	t.Cleanup(exch.Close)
	proxy := faultproxy.Start(t, exch.Addr())
	sc := sidecartest.Serve(t, sidecar.Config{Upstream: proxy.URL(exch.URL()), Fallbacks: []string{exch.URL()},
		Protocol: tc.dialect, HotStandby: 1})

	seqs := make([]chan []int, programs)
	for p := range programs {
		seqs[p] = readNumbers(t, ctx, sc.Addr, tc.subscribe, total)
	}
	require.NoError(t, exch.WaitSubscribers(ctx, tc.topic, 2), "one upstream subscription a leg")
	require.Eventually(t, func() bool {
		st := sc.Status()
		return len(st.Topics) == 1 && st.Topics[0].Refs == programs
	}, 10*time.Second, time.Millisecond)
	for n := range total {
		if n == faultAt {
			cut(proxy, fault)
		}
		exch.Publish(tc.topic, []byte(tc.message(n)))
		sleep(ctx, 500*time.Microsecond)
	}
	for p, ch := range seqs {
		got := <-ch
		require.Len(t, got, total, "program %d got every message", p)
		for n, v := range got {
			require.Equal(t, n, v, "program %d: message %d in order, once (-1: a gap notice)", p, n)
		}
	}
	legs := sc.Status().Upstream.Legs
	require.Len(t, legs, 2, "/v1/status lists the legs")
	assert.Equal(t, "connected", legs[1].State, "the clean leg stayed up")
}

// numberIn finds a message's "n" in a program's frame.
var numberIn = regexp.MustCompile(`"n":(\d+)`)

// readNumbers is a program behind the sidecar that asked for gap
// notices: it sends subscribe and returns the n of each of the first
// total messages, a gap notice counting as -1.
func readNumbers(t *testing.T, ctx context.Context, addr, subscribe string, total int) chan []int {
	t.Helper()
	ws, resp, err := websocket.DefaultDialer.DialContext(ctx, "ws://"+addr+"/ws?notify=gaps", nil)
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.NoError(t, ws.WriteMessage(websocket.TextMessage, []byte(subscribe)))
	// The answer comes with the topic attached (one step in the sidecar):
	// once it is read, no message of the feed can pass this program by.
	require.NoError(t, ws.SetReadDeadline(time.Now().Add(10*time.Second)))
	_, ack, err := ws.ReadMessage()
	require.NoError(t, err)
	require.Nil(t, numberIn.FindSubmatch(ack), "the subscribe's answer comes first: %s", ack)
	require.NoError(t, ws.SetReadDeadline(time.Time{}))
	out := make(chan []int, 1)
	stop := context.AfterFunc(ctx, func() { _ = ws.Close() })
	go func() {
		defer stop()
		defer ws.Close()
		var got []int
		defer func() { out <- got }()
		for len(got) < total {
			_, data, err := ws.ReadMessage()
			if err != nil {
				return
			}
			if strings.Contains(string(data), "wsfan/gap") {
				got = append(got, -1)
				continue
			}
			if m := numberIn.FindSubmatch(data); m != nil {
				n, _ := strconv.Atoi(string(m[1]))
				got = append(got, n)
			}
		}
	}()
	return out
}

// A leg that failed over to the other endpoint takes its own back once
// that answers probes for a while (client.WithSwitchBack), while the
// other leg carries the feed: the program loses nothing, through the
// failure and the switch back.
func TestStandbyLegTakesItsEndpointBack(t *testing.T) {
	const atLeast, downAt, healAt = 1500, 300, 600
	ctx := testutil.Context(t)
	exch := exchangetest.NewServer(thalex.Name)
	t.Cleanup(exch.Close)
	proxy := faultproxy.Start(t, exch.Addr())
	const topic = "ticker.BTC-PERPETUAL.raw"
	sb, err := standby.Dial(ctx, proxy.URL(exch.URL()), 1, client.WithProtocol(thalex.Protocol()),
		client.WithEndpoints(exch.URL()), client.WithSwitchBack(20*time.Millisecond, 200*time.Millisecond))
	require.NoError(t, err)
	t.Cleanup(func() { _ = sb.Close() })
	sub, err := sb.Subscribe(ctx, []string{topic})
	require.NoError(t, err)
	require.NoError(t, exch.WaitSubscribers(ctx, topic, 2))
	leg0 := sb.Legs()[0]

	var got []string
	total := make(chan int, 1) // how many were published, once the feed ends
	received := make(chan struct{})
	go func() {
		defer close(received)
		want := -1
		for want < 0 || len(got) < want {
			select {
			case m := <-sub.C():
				got = append(got, string(m.Data))
			case want = <-total:
			case <-ctx.Done():
				return
			}
		}
	}()
	message := func(n int) string { return fmt.Sprintf(`{"mark_price":%d}`, 60000+n) }
	movedAway, back := false, false
	n := 0
	// The feed runs until the leg is back on its endpoint, and at least
	// atLeast messages, so the switch back happens under it.
	for ; n < atLeast || (!back && ctx.Err() == nil); n++ {
		switch n {
		case downAt:
			proxy.Down()
		case healAt:
			_, at := leg0.Endpoint()
			movedAway = at == 1
			proxy.Heal()
		}
		if n > healAt && !back {
			_, at := leg0.Endpoint()
			back = at == 0 && leg0.State() == client.StateConnected
		}
		exch.Publish(topic, []byte(message(n)))
		sleep(ctx, time.Millisecond)
	}
	for range 100 { // and a tenth of a second after it
		exch.Publish(topic, []byte(message(n)))
		n++
		sleep(ctx, time.Millisecond)
	}
	total <- n
	<-received
	require.Len(t, got, n)
	for i := range n {
		require.Equal(t, message(i), got[i], "message %d: in order, once, none lost", i)
	}
	assert.True(t, movedAway, "leg 0 had failed over to the other endpoint")
	assert.True(t, back, "leg 0 took its own endpoint back while the feed ran")
}

// A single connection that failed over takes its preferred endpoint back,
// make before break: once the endpoint has answered probes for a while,
// the client subscribes there while the old connection still delivers,
// and leaves the old one once the two streams met. A steady feed across
// the switch arrives whole: nothing lost, nothing twice, nothing flagged.
// Thalex (no identity: payloads compared), Deribit books (change_id) and
// Ethereum heads (hash; the node assigns each connection its own
// subscription ids), the preferred endpoint's stream level with the old
// one's or 30 ms behind it.
func TestClientTakesItsEndpointBackLosingNothing(t *testing.T) {
	thalexTicker := func(n int) string { return fmt.Sprintf(`{"mark_price":%d}`, 60000+n) }
	deribitBook := func(n int) string {
		return fmt.Sprintf(`{"type":"change","change_id":%d,"prev_change_id":%d,"bids":[],"asks":[]}`, 1000+n, 999+n)
	}
	for _, tc := range []struct {
		name    string
		dialect string
		proto   protocol.Protocol
		topic   string
		message func(n int) string
		slow    time.Duration // the preferred endpoint's latency once back: its stream is behind
	}{
		{"thalex", thalex.Name, thalex.Protocol(), "ticker.BTC-PERPETUAL.raw", thalexTicker, 0},
		{"thalex/behind", thalex.Name, thalex.Protocol(), "ticker.BTC-PERPETUAL.raw", thalexTicker, 30 * time.Millisecond},
		{"deribit", deribit.Name, deribit.Protocol(), "book.BTC-PERPETUAL.100ms", deribitBook, 0},
		{"deribit/behind", deribit.Name, deribit.Protocol(), "book.BTC-PERPETUAL.100ms", deribitBook, 30 * time.Millisecond},
		{"ethereum/behind", ethereum.Name, ethereum.Protocol(), "newHeads", func(n int) string {
			return fmt.Sprintf(`{"number":"0x%x","hash":"0x%064x","parentHash":"0x%064x"}`, 1000+n, 1001+n, 1000+n)
		}, 30 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testutil.Context(t)
			exch := exchangetest.NewServer(exchangetest.Dialect(tc.dialect))
			t.Cleanup(exch.Close)
			proxy := faultproxy.Start(t, exch.Addr())
			c, err := client.Dial(ctx, proxy.URL(exch.URL()), client.WithProtocol(tc.proto),
				client.WithEndpoints(exch.URL()), client.WithSwitchBack(20*time.Millisecond, 200*time.Millisecond))
			require.NoError(t, err)
			t.Cleanup(func() { _ = c.Close() })
			sub, err := c.Subscribe(ctx, []string{tc.topic})
			require.NoError(t, err)

			// Away: the preferred endpoint goes down and the client
			// fails over to the other (a hole here, which is not what
			// this test is about); the feed starts once it is there.
			proxy.Down()
			require.Eventually(t, func() bool {
				_, at := c.Endpoint()
				return at == 1 && c.State() == client.StateConnected && exch.Subscribers(tc.topic) == 1
			}, 10*time.Second, time.Millisecond)
			// The failover's first message says it comes after a hole.
			exch.Publish(tc.topic, []byte(tc.message(-1)))
			for m := range sub.C() {
				if string(m.Data) == tc.message(-1) {
					require.True(t, m.Reconnected(), "the failover is flagged")
					break
				}
			}

			var got []string
			flagged := 0
			total := make(chan int, 1)
			received := make(chan struct{})
			go func() {
				defer close(received)
				want := -1
				for want < 0 || len(got) < want {
					select {
					case m := <-sub.C():
						got = append(got, string(m.Data))
						if m.Reconnected() || m.Gap() {
							flagged++
						}
					case want = <-total:
					case <-ctx.Done():
						return
					}
				}
			}()
			const healAt, atLeast = 100, 600
			back := false
			n := 0
			for ; n < atLeast || (!back && ctx.Err() == nil); n++ {
				if n == healAt {
					proxy.Heal()
					if tc.slow > 0 {
						proxy.Latency(tc.slow)
					}
				}
				if n > healAt && !back {
					_, at := c.Endpoint()
					back = at == 0
				}
				exch.Publish(tc.topic, []byte(tc.message(n)))
				sleep(ctx, time.Millisecond)
			}
			for range 100 {
				exch.Publish(tc.topic, []byte(tc.message(n)))
				n++
				sleep(ctx, time.Millisecond)
			}
			total <- n
			<-received
			require.Len(t, got, n)
			for i := range n {
				require.Equal(t, tc.message(i), got[i], "message %d: in order, once, none lost", i)
			}
			assert.Zero(t, flagged, "nothing flagged as after a hole")
			assert.True(t, back, "the client took its preferred endpoint back while the feed ran")
			assert.Equal(t, 1, exch.Subscribers(tc.topic), "the old connection is gone")
		})
	}
}

// Behind a sidecar whose upstream failed over, 20 programs read a steady
// feed while the upstream takes its preferred endpoint back: each gets
// every message once, in order, and no gap notice.
func TestSidecarTakesItsEndpointBackLosingNothing(t *testing.T) {
	const programs, healAt, atLeast = 20, 100, 600
	tc := sidecarCases[0] // a Deribit ticker
	ctx := testutil.Context(t)
	exch := exchangetest.NewServer(exchangetest.Dialect(tc.dialect))
	t.Cleanup(exch.Close)
	proxy := faultproxy.Start(t, exch.Addr())
	sc := sidecartest.Serve(t, sidecar.Config{Upstream: proxy.URL(exch.URL()), Fallbacks: []string{exch.URL()},
		Protocol: tc.dialect, UpstreamOptions: []client.Option{client.WithSwitchBack(20*time.Millisecond, 200*time.Millisecond)}})
	direct := sc.Status().Upstream.Endpoints[1]
	proxy.Down()
	require.Eventually(t, func() bool {
		up := sc.Status().Upstream
		return up.Endpoint == direct && up.State == client.StateConnected.String()
	}, 10*time.Second, time.Millisecond, "failed over")

	seqs := make([]chan []int, programs)
	back := false
	n := 0
	for p := range programs {
		seqs[p] = readNumbers(t, ctx, sc.Addr, tc.subscribe, atLeast)
	}
	for ; n < atLeast; n++ {
		if n == healAt {
			proxy.Heal()
		}
		if n > healAt && !back {
			back = sc.Status().Upstream.Endpoint != direct
		}
		exch.Publish(tc.topic, []byte(tc.message(n)))
		sleep(ctx, time.Millisecond)
	}
	require.True(t, back, "the upstream took its preferred endpoint back while the feed ran")
	for p, ch := range seqs {
		got := <-ch
		require.Len(t, got, atLeast, "program %d got every message", p)
		for i, v := range got {
			require.Equal(t, i, v, "program %d: message %d in order, once (-1: a gap notice)", p, i)
		}
	}
}

// lagBehindPreferred dials preferred with fallback, behind a proxy, as
// its other endpoint, subscribes topic, stops preferred so the client
// fails over, and delays the fallback's connection by lag: the old
// connection of the switch-back to come is lag behind the new one.
func lagBehindPreferred(t *testing.T, preferred, fallback *exchangetest.Server, topic string, lag time.Duration) (*client.Client, *client.Subscription) {
	t.Helper()
	proxy := faultproxy.Start(t, fallback.Addr())
	ctx := testutil.Context(t)
	c, err := client.Dial(ctx, preferred.URL(), client.WithProtocol(deribit.Protocol()),
		client.WithEndpoints(proxy.URL(fallback.URL())), client.WithSwitchBack(10*time.Millisecond, 50*time.Millisecond))
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	sub, err := c.Subscribe(ctx, []string{topic})
	require.NoError(t, err)
	preferred.Stop()
	require.NoError(t, fallback.WaitSubscribers(ctx, topic, 1))
	require.Eventually(t, func() bool { return c.State() == client.StateConnected }, 5*time.Second, time.Millisecond)
	proxy.Latency(lag)
	return c, sub
}

// readN reads the n of each message of sub until it has total of them, or
// ctx ends; the result comes on the channel.
func readN(ctx context.Context, sub *client.Subscription, total int) <-chan []int {
	out := make(chan []int, 1)
	go func() { // the program
		var got []int
		defer func() { out <- got }()
		for len(got) < total {
			select {
			case m, ok := <-sub.C():
				if !ok {
					return
				}
				var v struct{ N int }
				if json.Unmarshal(m.Data, &v) == nil {
					got = append(got, v.N)
				}
			case <-ctx.Done():
				return
			}
		}
	}()
	return out
}

// feedBoth publishes the same n-th message of topic on both servers.
func feedBoth(a, b *exchangetest.Server, topic string, n int) {
	msg := []byte(fmt.Sprintf(`{"timestamp":%d,"n":%d}`, 1700000000000+n, n))
	a.Publish(topic, msg)
	b.Publish(topic, msg)
}

// Messages the old connection still has on its way when the new one is
// subscribed (sent before the new subscription, so never on the new
// connection) are delivered before the switch: the old connection stays
// until the streams meet, even when no message had come on either yet.
// Here the old connection lags 300 ms behind a feed of a message every
// 20 ms, so about 15 are on their way when the new one subscribes. (A
// first version ended the overlap at once when nothing had come yet, and
// lost them.)
func TestSwitchBackDeliversWhatTheOldConnectionHasOnItsWay(t *testing.T) {
	const topic, total = "ticker.BTC-PERPETUAL.100ms", 120
	preferred, fallback := exchangetest.NewServer(deribit.Name), exchangetest.NewServer(deribit.Name)
	t.Cleanup(preferred.Close)
	t.Cleanup(fallback.Close)
	c, sub := lagBehindPreferred(t, preferred, fallback, topic, 300*time.Millisecond)
	got := readN(testutil.Context(t), sub, total)
	for n := range total {
		if n == 10 {
			require.NoError(t, preferred.Start())
		}
		feedBoth(preferred, fallback, topic, n)
		time.Sleep(20 * time.Millisecond)
	}
	seq := <-got
	_, at := c.Endpoint()
	require.Equal(t, 0, at, "took the preferred endpoint back")
	require.Len(t, seq, total)
	for i, n := range seq {
		require.Equal(t, i, n, "message %d: in order, once, none lost", i)
	}
}

// A topic left and subscribed again right after the switch, while the old
// connection (300 ms behind) still brings the old subscription's
// messages and the handover waits for another topic's streams to meet,
// is the new connection's alone: its new subscription gets each message
// once, in order, none of the old connection's late copies.
func TestResubscribedDuringTheSwitchBackGetsNoLateCopies(t *testing.T) {
	const topic, other, total = "ticker.BTC-PERPETUAL.100ms", "ticker.ETH-PERPETUAL.100ms", 150
	preferred, fallback := exchangetest.NewServer(deribit.Name), exchangetest.NewServer(deribit.Name)
	t.Cleanup(preferred.Close)
	t.Cleanup(fallback.Close)
	c, sub := lagBehindPreferred(t, preferred, fallback, topic, 300*time.Millisecond)
	ctx := testutil.Context(t)
	_, err := c.Subscribe(ctx, []string{other}) // keeps the handover open while it is behind
	require.NoError(t, err)
	var again *client.Subscription
	var got <-chan []int
	first := 0 // the first message published after the new subscription
	for n := range total {
		if n == 10 {
			require.NoError(t, preferred.Start())
		}
		if _, at := c.Endpoint(); at == 0 && again == nil {
			require.NoError(t, sub.Unsubscribe(ctx))
			again, err = c.Subscribe(ctx, []string{topic})
			require.NoError(t, err)
			first = n
			got = readN(ctx, again, total-first)
		}
		feedBoth(preferred, fallback, topic, n)
		feedBoth(preferred, fallback, other, n)
		time.Sleep(10 * time.Millisecond)
	}
	require.NotNil(t, again, "took the preferred endpoint back")
	seq := <-got
	require.Len(t, seq, total-first)
	for i, n := range seq {
		require.Equal(t, first+i, n, "message %d of the new subscription: in order, once", i)
	}
}
