package gethtest

import (
	"context"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/core/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// nextHead waits for a head on ch.
func nextHead(t *testing.T, ch <-chan *types.Header) *types.Header {
	t.Helper()
	select {
	case h := <-ch:
		return h
	case <-time.After(10 * time.Second):
		t.Fatal("no head")
		return nil
	}
}

// go-ethereum's ethclient subscribes newHeads twice on one connection,
// through the sidecar, to go-ethereum's own node: as against the node
// directly, each subscription gets every head, and unsubscribing one
// leaves the other (go-ethereum's client keys its subscriptions by id).
func TestEthclientTwoNewHeadSubscriptionsThroughTheSidecar(t *testing.T) {
	node, url := startNode(t)
	for name, target := range map[string]string{"direct": url, "sidecar": startSidecar(t, url)} {
		t.Run(name, func(t *testing.T) {
			c := dialClient(t, target)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			a, b := make(chan *types.Header, 16), make(chan *types.Header, 16)
			subA, err := c.SubscribeNewHead(ctx, a)
			require.NoError(t, err)
			subB, err := c.SubscribeNewHead(ctx, b)
			require.NoError(t, err)
			defer subB.Unsubscribe()

			for range 3 {
				hash := node.Commit()
				assert.Equal(t, hash, nextHead(t, a).Hash(), "the first subscription")
				assert.Equal(t, hash, nextHead(t, b).Hash(), "the second subscription")
			}
			subA.Unsubscribe()
			hash := node.Commit()
			assert.Equal(t, hash, nextHead(t, b).Hash(), "the second keeps its heads")
			select {
			case err := <-subB.Err():
				t.Fatalf("the second subscription ended: %v", err)
			default:
			}
		})
	}
}
