package bench

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/ethereum/go-ethereum/rpc"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/ethereum"
)

// logsService serves eth_subscribe("logs", {"address": A}) on
// go-ethereum's own rpc server and notifies every subscription on demand.
type logsService struct {
	mu   sync.Mutex
	subs map[rpc.ID]logsSub
}

type logsSub struct {
	n       *rpc.Notifier
	address string
}

// Logs is eth_subscribe's "logs".
func (s *logsService) Logs(ctx context.Context, crit struct {
	Address string `json:"address"`
}) (*rpc.Subscription, error) {
	n, ok := rpc.NotifierFromContext(ctx)
	if !ok {
		return nil, rpc.ErrNotificationsUnsupported
	}
	sub := n.CreateSubscription()
	s.mu.Lock()
	s.subs[sub.ID] = logsSub{n: n, address: crit.Address}
	s.mu.Unlock()
	return sub, nil
}

// count is how many subscriptions the service holds.
func (s *logsService) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.subs)
}

// notifyAll sends round to every subscription, naming its address.
func (s *logsService) notifyAll(round int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, sub := range s.subs {
		_ = sub.n.Notify(id, map[string]any{"address": sub.address, "round": round})
	}
}

// gethNode is go-ethereum's rpc server over WebSocket on addr, capping
// batches at batchLimit as --rpc.batch-request-limit does.
type gethNode struct {
	svc *logsService
	rpc *rpc.Server
	hs  *http.Server
	ln  net.Listener
}

func startGethNode(t *testing.T, addr string, batchLimit int) *gethNode {
	t.Helper()
	var ln net.Listener
	var err error
	for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if ln, err = net.Listen("tcp", addr); err == nil || time.Now().After(deadline) {
			break
		}
	}
	require.NoError(t, err)
	n := &gethNode{svc: &logsService{subs: make(map[rpc.ID]logsSub)}, rpc: rpc.NewServer(), ln: ln}
	n.rpc.SetBatchLimits(batchLimit, 10<<20)
	require.NoError(t, n.rpc.RegisterName("eth", n.svc))
	n.hs = &http.Server{Handler: n.rpc.WebsocketHandler([]string{"*"}), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = n.hs.Serve(ln) }()
	return n
}

// stop kills the node: its connections close.
func (n *gethNode) stop() {
	n.rpc.Stop()
	_ = n.hs.Close()
}

// 50 logs subscriptions made one by one against go-ethereum's own server
// capping batches at 20, as hosted providers do: after the node restarts,
// the restore goes out in batches it accepts and every subscription
// delivers again (one batch of 50 would get one "batch too large" error
// and 49 silences).
func TestRestoreWithinGethBatchLimit(t *testing.T) {
	const subs, limit = 50, 20
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	node := startGethNode(t, addr, limit)
	defer func() { node.stop() }()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, "ws://"+addr, client.WithProtocol(ethereum.Protocol()),
		client.WithBackoff(func() backoff.BackOff { return backoff.NewConstantBackOff(10 * time.Millisecond) }))
	require.NoError(t, err)
	defer func() { _ = c.Close() }()
	all := make([]*client.Subscription, subs)
	for i := range all {
		all[i], err = c.Subscribe(ctx, []string{fmt.Sprintf(`["logs",{"address":"0x%040x"}]`, i)})
		require.NoError(t, err)
	}
	receiveAll := func(round int) {
		t.Helper()
		node.svc.notifyAll(round)
		for i, sub := range all {
			select {
			case m := <-sub.C():
				require.Contains(t, string(m.Data), fmt.Sprintf(`"round":%d`, round), "subscription %d", i)
			case <-ctx.Done():
				t.Fatalf("round %d: subscription %d got nothing", round, i)
			}
		}
	}
	receiveAll(1)

	node.stop()
	node = startGethNode(t, addr, limit)
	for restored := false; !restored; {
		select {
		case ev := <-c.Events():
			if ev.Kind == client.Resubscribed {
				require.Equal(t, subs, ev.Topics)
				restored = true
			}
			if ev.Kind == client.Disconnected && ev.Err != nil && errors.Is(ev.Err, client.ErrClosed) {
				t.Fatal("client closed")
			}
		case <-ctx.Done():
			t.Fatal("not restored")
		}
	}
	require.Equal(t, subs, node.svc.count(), "the node holds every subscription again")
	receiveAll(2)
}
