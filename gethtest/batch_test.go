package gethtest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/node"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/ethereum"
)

// A batch of 45 calls against go-ethereum's node capped at 8 calls a
// batch and 600 bytes of answers: the SDK splits what the node refuses
// as "batch too large" and sends again what it answers "response too
// large", and every call is answered, in order, with its own block.
func TestBatchCallOverTheNodesCaps(t *testing.T) {
	backend, url := startNodeWith(t, types.GenesisAlloc{}, func(nc *node.Config) {
		nc.BatchRequestLimit, nc.BatchResponseMaxSize = 8, 600
	})
	const blocks = 45
	for range blocks {
		backend.Commit()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, url, client.WithProtocol(ethereum.Protocol()))
	require.NoError(t, err)
	defer c.Close()

	type header struct {
		Number string `json:"number"`
	}
	results := make([]header, blocks)
	batch := make([]client.BatchElem, blocks)
	for i := range batch {
		batch[i] = client.BatchElem{Method: "eth_getBlockByNumber", Params: []any{fmt.Sprintf("0x%x", i+1), false}, Result: &results[i]}
	}
	require.NoError(t, c.BatchCall(ctx, batch))
	for i := range batch {
		require.NoError(t, batch[i].Error, "call %d", i)
		assert.Equal(t, fmt.Sprintf("0x%x", i+1), results[i].Number, "call %d answered with its own block", i)
	}
}
