package standby_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/deribit"
	"github.com/wsfan/wsfan/pkg/ethereum"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/standby"
)

// head is block n of a chain.
func head(n int) []byte {
	return fmt.Appendf(nil, `{"number":"0x%x","hash":"0x%064x","parentHash":"0x%064x"}`, n, n+1, n)
}

// On a chain, a Standby's calls go to the node with the highest head,
// and never to one more than WithHeadLag blocks behind it; each head is
// delivered once, whichever node sent it first.
func TestStandbyCallsTheHighestHead(t *testing.T) {
	ctx := testutil.Context(t)
	nodes := []*exchangetest.Server{exchangetest.NewServer(ethereum.Name), exchangetest.NewServer(ethereum.Name)}
	for i, n := range nodes {
		t.Cleanup(n.Close)
		n.Handle("eth_chainId", func(json.RawMessage) (any, *protocol.Error) { return fmt.Sprintf("node %d", i), nil })
	}
	sb, err := standby.Dial(ctx, nodes[0].URL(), 1, client.WithProtocol(ethereum.Protocol()),
		client.WithEndpoints(nodes[1].URL()))
	require.NoError(t, err)
	t.Cleanup(func() { _ = sb.Close() })
	sub, err := sb.Subscribe(ctx, []string{"newHeads"})
	require.NoError(t, err)
	for _, n := range nodes {
		require.NoError(t, n.WaitSubscribers(ctx, "newHeads", 1))
	}
	called := func() string {
		var who string
		require.NoError(t, sb.Call(ctx, "eth_chainId", nil, &who))
		return who
	}
	receive := func(upTo int) {
		for {
			m := <-sub.C()
			var h struct{ Number string }
			require.NoError(t, json.Unmarshal(m.Data, &h))
			if h.Number == fmt.Sprintf("0x%x", upTo) {
				return
			}
		}
	}

	for b := 1; b <= 10; b++ { // both nodes level
		nodes[0].Publish("newHeads", head(b))
		nodes[1].Publish("newHeads", head(b))
	}
	receive(10)
	for b := 11; b <= 15; b++ { // node 1 pulls ahead
		nodes[1].Publish("newHeads", head(b))
	}
	receive(15)
	assert.Equal(t, "node 1", called(), "the highest head leads")
	for b := 11; b <= 16; b++ { // node 0 catches up, and leads by one
		nodes[0].Publish("newHeads", head(b))
	}
	receive(16)
	assert.Equal(t, "node 0", called(), "the highest head leads")
	assert.Equal(t, 1, nodes[0].CountReceived("eth_chainId"), "node 0 took no call while behind")
	select {
	case m := <-sub.C():
		t.Fatalf("a head delivered twice: %s", m.Data)
	default:
	}
}

// The legs keep one request budget. Cancel-on-disconnect of the
// connection's scope is made on every leg
// (each loses its own with its connection); of the account's scope it
// is refused, before anything is sent: a standby leg that died would
// cancel the account's orders.
func TestStandbyCancelOnDisconnectOnEveryLeg(t *testing.T) {
	ctx := testutil.Context(t)
	exch := exchangetest.NewServer(deribit.Name)
	t.Cleanup(exch.Close)
	const method = "private/enable_cancel_on_disconnect"
	exch.Handle(method, func(json.RawMessage) (any, *protocol.Error) { return "ok", nil })
	sb, err := standby.Dial(ctx, exch.URL(), 1, client.WithProtocol(deribit.Protocol()))
	require.NoError(t, err)
	t.Cleanup(func() { _ = sb.Close() })

	assert.True(t, sb.OneBudget(), "the venue's request budget counts every leg")
	require.NoError(t, sb.Call(ctx, method, map[string]string{"scope": "connection"}, nil))
	assert.Equal(t, 2, exch.CountReceived(method), "made on both legs")
	err = sb.Call(ctx, method, map[string]string{"scope": "account"}, nil)
	require.ErrorIs(t, err, client.ErrRefused)
	assert.Contains(t, err.Error(), "account's scope")
	assert.Equal(t, 2, exch.CountReceived(method), "nothing sent")
}

// A leg that failed over does not take its endpoint back while
// cancel-on-disconnect holds on its connection: reconnecting would cancel
// the orders placed on it. (Without the setting it does:
// TestStandbyLegTakesItsEndpointBack in internal/reliability.)
func TestStandbyLegKeepsItsConnectionWhileASettingHolds(t *testing.T) {
	const topic, method = "ticker.BTC-PERPETUAL.100ms", "private/enable_cancel_on_disconnect"
	ctx := testutil.Context(t)
	preferred, fallback := exchangetest.NewServer(deribit.Name), exchangetest.NewServer(deribit.Name)
	for _, s := range []*exchangetest.Server{preferred, fallback} {
		t.Cleanup(s.Close)
		s.Handle(method, func(json.RawMessage) (any, *protocol.Error) { return "ok", nil })
	}
	sb, err := standby.Dial(ctx, preferred.URL(), 1, client.WithProtocol(deribit.Protocol()),
		client.WithEndpoints(fallback.URL()), client.WithSwitchBack(10*time.Millisecond, 50*time.Millisecond))
	require.NoError(t, err)
	t.Cleanup(func() { _ = sb.Close() })
	_, err = sb.Subscribe(ctx, []string{topic})
	require.NoError(t, err)
	preferred.Stop()
	require.NoError(t, fallback.WaitSubscribers(ctx, topic, 2), "leg 0 failed over")
	leg0 := sb.Legs()[0]
	require.Eventually(t, func() bool { _, at := leg0.Endpoint(); return at == 1 && leg0.State() == client.StateConnected },
		5*time.Second, time.Millisecond)
	require.NoError(t, sb.Call(ctx, method, map[string]string{"scope": "connection"}, nil))
	require.NoError(t, preferred.Start())
	time.Sleep(500 * time.Millisecond) // ten times the switch-back's after
	_, at := leg0.Endpoint()
	assert.Equal(t, 1, at, "leg 0 still on the fallback")
	assert.Zero(t, preferred.Connections())
	assert.Equal(t, 2, fallback.Subscribers(topic))
}

// A merged subscription under Block whose consumer stopped reading holds
// its legs' readers, as Block does; Unsubscribe and Close still return.
func TestStandbyBlockedConsumerCanLeave(t *testing.T) {
	ctx := testutil.Context(t)
	exch := exchangetest.NewServer(deribit.Name)
	t.Cleanup(exch.Close)
	sb, err := standby.Dial(ctx, exch.URL(), 1, client.WithProtocol(deribit.Protocol()))
	require.NoError(t, err)
	sub, err := sb.Subscribe(ctx, []string{"ticker.BTC-PERPETUAL.100ms"}, client.Buffer(1), client.Overflow(client.Block))
	require.NoError(t, err)
	require.NoError(t, exch.WaitSubscribers(ctx, "ticker.BTC-PERPETUAL.100ms", 2))
	for n := range 20 { // nobody reads
		exch.Publish("ticker.BTC-PERPETUAL.100ms", fmt.Appendf(nil, `{"timestamp":%d}`, n))
	}
	require.Eventually(t, func() bool { return len(sub.C()) == cap(sub.C()) }, 5*time.Second, time.Millisecond)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = sub.Unsubscribe(ctx)
		_ = sb.Close()
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Unsubscribe and Close wait for a consumer that stopped reading")
	}
}

// SubscribeTopics refuses a topic given twice before subscribing
// anything, and keeps nothing of the call.
func TestStandbySubscribeTopicsRefusesATopicTwice(t *testing.T) {
	ctx := testutil.Context(t)
	exch := exchangetest.NewServer(deribit.Name)
	t.Cleanup(exch.Close)
	sb, err := standby.Dial(ctx, exch.URL(), 1, client.WithProtocol(deribit.Protocol()))
	require.NoError(t, err)
	t.Cleanup(func() { _ = sb.Close() })
	topic, err := deribit.Protocol().NewTopic("ticker.BTC-PERPETUAL.100ms")
	require.NoError(t, err)
	_, _, err = sb.SubscribeTopics(ctx, []*protocol.Topic{topic, topic})
	require.ErrorContains(t, err, "given twice")
	assert.Zero(t, sb.Merges())
	assert.Zero(t, exch.CountReceived("public/subscribe"))
}
