package gethtest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/ethereum"
)

// go-ethereum's node reorganises: blocks 2 and 3 are replaced by a
// longer fork from block 1. The SDK flags the first head of the fork
// FlagReorg with a Reorg event naming the two replaced hashes, and a
// program's ethereum.Chain fed the same heads says block 3 is no longer
// canonical.
func TestReorgIsFlagged(t *testing.T) {
	node, url := startNode(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, url, client.WithProtocol(ethereum.Protocol()))
	require.NoError(t, err)
	defer c.Close()
	sub, err := c.Subscribe(ctx, []string{"newHeads"})
	require.NoError(t, err)
	followed := ethereum.NewChain(16)
	next := func() client.Message {
		t.Helper()
		m := nextMessage(t, ctx, sub)
		_, err := followed.Apply(m.Data)
		require.NoError(t, err)
		return m
	}
	first := node.Commit()
	next()
	replaced := []string{node.Commit().Hex(), node.Commit().Hex()}
	next()
	next()
	drainEvents(c)

	require.NoError(t, node.Fork(first))
	for range 3 {
		node.Commit()
	}
	var reorg client.Message
	for reorg.Flags&client.FlagReorg == 0 {
		reorg = next()
	}
	ev := waitEvent(t, ctx, c, client.Reorg)
	assert.Equal(t, replaced, ev.Replaced, "the blocks replaced, oldest first")
	assert.Equal(t, 2, ev.Depth)
	for m := reorg; headNumber(t, m.Data) < 4; {
		m = next() // the rest of the fork: blocks 3 and 4
		assert.Zero(t, m.Flags&client.FlagReorg, "the fork's later heads follow")
	}
	canonical, known := followed.Canonical(3, replaced[1])
	assert.True(t, known)
	assert.False(t, canonical, "block 3 of the old chain is no longer canonical")
}

// drainEvents empties c's event channel.
func drainEvents(c *client.Client) {
	for {
		select {
		case <-c.Events():
		default:
			return
		}
	}
}

// waitEvent waits for an event of kind.
func waitEvent(t *testing.T, ctx context.Context, c *client.Client, kind client.EventKind) client.Event {
	t.Helper()
	for {
		select {
		case ev := <-c.Events():
			if ev.Kind == kind {
				return ev
			}
		case <-ctx.Done():
			t.Fatalf("no %v event", kind)
			return client.Event{}
		}
	}
}
