package gethtest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/faultproxy"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/ethereum"
	"github.com/wsfan/wsfan/pkg/standby"
)

// A hot standby in front of go-ethereum's own node, each leg through a
// proxy of its own: one leg is cut while the node makes blocks, and the
// program gets every head once, in order, with no hole marked and
// nothing backfilled (the other leg carried them). Calls go to a leg at
// the highest head.
func TestStandbyOnGethLosesNoHead(t *testing.T) {
	node, url := startNode(t)
	legs := []*faultproxy.Proxy{faultproxy.Start(t, url[len("ws://"):]), faultproxy.Start(t, url[len("ws://"):])}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sb, err := standby.Dial(ctx, legs[0].URL(url), 1,
		append(fastReconnect, client.WithProtocol(ethereum.Protocol()), client.WithEndpoints(legs[1].URL(url)))...)
	require.NoError(t, err)
	defer sb.Close()
	sub, err := sb.Subscribe(ctx, []string{"newHeads"})
	require.NoError(t, err)

	var seen []uint64
	take := func() {
		m := nextMessage(t, ctx, sub)
		if len(seen) == 0 && headNumber(t, m.Data) == 0 {
			// The node announced its genesis block to a leg that
			// subscribed as it started (1 run in 150-300 here): a head
			// of one leg's, which the merge passes on as a program on
			// that node would read it. The test's own blocks follow.
			m = nextMessage(t, ctx, sub)
		}
		assert.Zero(t, m.Flags&(client.FlagReconnected|client.FlagGap|client.FlagBackfilled), "head %s: %v", m.Data, m.Flags)
		seen = append(seen, headNumber(t, m.Data))
	}
	for range 3 {
		node.Commit()
		take()
	}
	legs[0].ResetPeer()
	for range 5 {
		node.Commit()
		take()
	}
	legs[0].Heal()
	for range 3 {
		node.Commit()
		take()
	}
	want := make([]uint64, len(seen))
	for i := range want {
		want[i] = seen[0] + uint64(i)
	}
	assert.Equal(t, want, seen, "every head once, in order")
	var number string
	require.NoError(t, sb.Call(ctx, "eth_blockNumber", nil, &number))
	assert.NotEmpty(t, number)
	select {
	case m := <-sub.C():
		t.Fatalf("a head delivered twice: %s", m.Data)
	case <-time.After(200 * time.Millisecond):
	}
}
