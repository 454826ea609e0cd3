package gethtest

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/ethclient/simulated"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/faultproxy"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/ethereum"
)

// fastReconnect notices a dead link and comes back within a second.
var fastReconnect = []client.Option{
	client.WithPing(100*time.Millisecond, 300*time.Millisecond),
	client.WithReconnectWait(10*time.Millisecond, 100*time.Millisecond),
}

// headNumber reads a newHeads payload's number.
func headNumber(t *testing.T, data []byte) uint64 {
	t.Helper()
	var h struct {
		Number hexutil.Uint64 `json:"number"`
	}
	require.NoError(t, json.Unmarshal(data, &h), "%s", data)
	return uint64(h.Number)
}

// The link to go-ethereum's node is cut while it makes 5 blocks, then
// restored: the SDK delivers every head once, in order, the 5 it missed
// fetched and flagged backfilled, before the live ones.
func TestHeadsMissedDuringAnOutageAreBackfilled(t *testing.T) {
	ctx, node, proxy, c, sub := headsThroughAProxy(t, 60*time.Second)

	next := func() client.Message { return nextMessage(t, ctx, sub) }
	var seen []uint64
	for range 3 {
		node.Commit()
		seen = append(seen, headNumber(t, next().Data))
	}
	proxy.Down()
	waitState(t, ctx, c, client.StateReconnecting)
	for range 5 {
		node.Commit()
	}
	proxy.Heal()
	waitState(t, ctx, c, client.StateConnected)
	node.Commit()
	backfilled := 0
	for len(seen) < 3+5+1 {
		m := next()
		if m.Flags&client.FlagBackfilled != 0 {
			backfilled++
		}
		assert.False(t, m.Gap(), "no gap: %v", m.Flags)
		seen = append(seen, headNumber(t, m.Data))
	}
	want := make([]uint64, len(seen))
	for i := range want {
		want[i] = seen[0] + uint64(i)
	}
	assert.Equal(t, want, seen, "every head once, in order")
	assert.Equal(t, 5, backfilled, "the heads made during the outage")
}

// headsThroughAProxy starts go-ethereum's node behind a fault proxy and a
// client subscribed to its newHeads through it, all ended with the test,
// which has within to run.
func headsThroughAProxy(t *testing.T, within time.Duration) (context.Context, *simulated.Backend, *faultproxy.Proxy, *client.Client, *client.Subscription) {
	t.Helper()
	node, url := startNode(t)
	proxy := faultproxy.Start(t, url[len("ws://"):])
	ctx, cancel := context.WithTimeout(context.Background(), within)
	t.Cleanup(cancel)
	c, err := client.Dial(ctx, proxy.URL(url), append(fastReconnect, client.WithProtocol(ethereum.Protocol()))...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	sub, err := c.Subscribe(ctx, []string{"newHeads"})
	require.NoError(t, err)
	return ctx, node, proxy, c, sub
}

// nextMessage waits for sub's next message within ctx.
func nextMessage(t *testing.T, ctx context.Context, sub *client.Subscription) client.Message {
	t.Helper()
	select {
	case m := <-sub.C():
		return m
	case <-ctx.Done():
		t.Fatalf("no message on %v", sub.Topics())
		return client.Message{}
	}
}

// waitState waits for c to reach state.
func waitState(t *testing.T, ctx context.Context, c *client.Client, state client.State) {
	t.Helper()
	for c.State() != state {
		select {
		case <-ctx.Done():
			t.Fatalf("never %v (now %v)", state, c.State())
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// Through the sidecar, 50 unchanged ethclients: the sidecar's link to
// go-ethereum's node is cut while it makes 5 blocks, then restored; the
// sidecar backfills once for all of them, and every ethclient gets every
// head once, in order, as ordinary heads.
func TestEthclientsGetEveryHeadThroughASidecarOutage(t *testing.T) {
	node, url := startNode(t)
	proxy := faultproxy.Start(t, url[len("ws://"):])
	s, local := startFastSidecar(t, proxy.URL(url))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	const clients, before, during, after = 50, 2, 5, 2
	heads := make([]chan *types.Header, clients)
	for i := range heads {
		heads[i] = make(chan *types.Header, before+during+after)
		sub, err := dialClient(t, local).SubscribeNewHead(ctx, heads[i])
		require.NoError(t, err)
		t.Cleanup(sub.Unsubscribe)
	}
	for range before {
		node.Commit()
	}
	for _, ch := range heads {
		for range before {
			nextHead(t, ch)
		}
	}
	proxy.Down()
	require.Eventually(t, func() bool { return !s.Ready() }, 10*time.Second, 5*time.Millisecond, "the sidecar noticed the cut")
	for range during {
		node.Commit()
	}
	proxy.Heal()
	require.Eventually(t, s.Ready, 10*time.Second, 5*time.Millisecond, "the sidecar is back")
	for range after {
		node.Commit()
	}
	for i, ch := range heads {
		first := nextHead(t, ch).Number.Uint64()
		assert.Equal(t, uint64(before+1), first, "client %d: the first head after the cut", i)
		for n := first + 1; n <= before+during+after; n++ {
			assert.Equal(t, n, nextHead(t, ch).Number.Uint64(), "client %d", i)
		}
	}
}

// While go-ethereum's node makes blocks as fast as it can, the link is
// cut and restored again and again, each restore backfilling what the
// outage missed while more blocks come: every head is delivered once, in
// order. (A block made while the restore asks the node for its current
// one may be announced on the new subscription only after the backfill
// fetched it; internal/recovery drops it then. That late announcement
// was not seen from this node in these runs: recovery's own tests make
// it happen.)
func TestNoHeadTwiceWhileBlocksAreMadeDuringTheRestore(t *testing.T) {
	ctx, node, proxy, c, sub := headsThroughAProxy(t, 90*time.Second)

	stop := make(chan struct{})
	made := make(chan struct{})
	go func() { // the node's block production, throughout
		defer close(made)
		for {
			select {
			case <-stop:
				return
			default:
				node.Commit()
			}
		}
	}()
	var seen []uint64
	backfilled := 0
	read := func(until time.Time) {
		for time.Now().Before(until) {
			select {
			case m := <-sub.C():
				seen = append(seen, headNumber(t, m.Data))
				if m.Flags&client.FlagBackfilled != 0 {
					backfilled++
				}
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
	const outages = 8
	for range outages {
		read(time.Now().Add(50 * time.Millisecond))
		proxy.Down()
		waitState(t, ctx, c, client.StateReconnecting)
		read(time.Now().Add(20 * time.Millisecond))
		proxy.Heal()
		waitState(t, ctx, c, client.StateConnected)
	}
	read(time.Now().Add(100 * time.Millisecond))
	close(stop)
	<-made

	require.Positive(t, backfilled, "the restores backfilled what the outages missed")
	for i := 1; i < len(seen); i++ {
		require.Equal(t, seen[i-1]+1, seen[i], "head %d of %d: every head once, in order (%v)", i, len(seen), seen[max(0, i-5):min(len(seen), i+5)])
	}
}
