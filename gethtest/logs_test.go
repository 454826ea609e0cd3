package gethtest

import (
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"fmt"
	"math/big"
	"testing"
	"time"

	geth "github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient/simulated"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/faultproxy"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/ethereum"
)

// emitter is the init code of a contract whose every call emits one log
// (LOG0, no topics): it returns the 6-byte runtime PUSH1 0 PUSH1 0 LOG0
// STOP.
var emitter = common.FromHex("0x6006600c60003960066000f3" + "60006000a000")

// logChain is go-ethereum's simulated chain with a funded key and the
// emitter deployed, served over WebSocket on loopback.
type logChain struct {
	*simulated.Backend
	url      string
	key      *ecdsa.PrivateKey
	nonce    uint64
	contract common.Address
}

func startLogChain(t *testing.T) *logChain {
	t.Helper()
	key, err := crypto.GenerateKey()
	require.NoError(t, err)
	from := crypto.PubkeyToAddress(key.PublicKey)
	b, url := startNodeWith(t, types.GenesisAlloc{from: {Balance: new(big.Int).Lsh(big.NewInt(1), 100)}}, nil)
	lc := &logChain{Backend: b, url: url, key: key}
	lc.send(t, nil, emitter)
	lc.Commit()
	lc.contract = crypto.CreateAddress(from, 0)
	return lc
}

// send sends a transaction to to (nil: a contract creation) with data.
func (lc *logChain) send(t *testing.T, to *common.Address, data []byte) {
	t.Helper()
	tx := types.NewTx(&types.DynamicFeeTx{ChainID: big.NewInt(1337), Nonce: lc.nonce, GasTipCap: big.NewInt(1e9),
		GasFeeCap: big.NewInt(100e9), Gas: 200_000, To: to, Data: data})
	signed, err := types.SignTx(tx, types.LatestSignerForChainID(big.NewInt(1337)), lc.key)
	require.NoError(t, err)
	require.NoError(t, lc.Client().SendTransaction(context.Background(), signed))
	lc.nonce++
}

// block makes a block holding n logs. The pool takes a transaction in
// the background: the block is made once the pool's pending nonce shows
// every one sent, or one could land in the next block.
func (lc *logChain) block(t *testing.T, n int) {
	t.Helper()
	for range n {
		lc.send(t, &lc.contract, nil)
	}
	from := crypto.PubkeyToAddress(lc.key.PublicKey)
	require.Eventually(t, func() bool {
		pending, err := lc.Client().PendingNonceAt(context.Background(), from)
		return err == nil && pending == lc.nonce
	}, 10*time.Second, time.Millisecond, "the pool holds the block's %d transactions", n)
	lc.Commit()
}

// logPlace reads a log's block number and index.
func logPlace(t *testing.T, data []byte) [2]uint64 {
	t.Helper()
	var l struct {
		Block hexutil.Uint64 `json:"blockNumber"`
		Index hexutil.Uint64 `json:"logIndex"`
	}
	require.NoError(t, json.Unmarshal(data, &l), "%s", data)
	return [2]uint64{uint64(l.Block), uint64(l.Index)}
}

// The link to go-ethereum's node is cut while it makes 3 blocks of 2
// logs, then restored: the SDK delivers every log of its filter once, in
// block and log order, the 6 it missed fetched with eth_getLogs and
// flagged backfilled, before the live ones.
func TestLogsMissedDuringAnOutageAreBackfilled(t *testing.T) {
	lc := startLogChain(t)
	proxy := faultproxy.Start(t, lc.url[len("ws://"):])
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, proxy.URL(lc.url), append(fastReconnect, client.WithProtocol(ethereum.Protocol()))...)
	require.NoError(t, err)
	defer c.Close()
	topic := fmt.Sprintf(`["logs",{"address":%q}]`, lc.contract.Hex())
	sub, err := c.Subscribe(ctx, []string{topic})
	require.NoError(t, err)
	next := func() client.Message { return nextMessage(t, ctx, sub) }
	var seen [][2]uint64
	lc.block(t, 1)
	seen = append(seen, logPlace(t, next().Data))

	proxy.Down()
	waitState(t, ctx, c, client.StateReconnecting)
	for range 3 {
		lc.block(t, 2)
	}
	proxy.Heal()
	waitState(t, ctx, c, client.StateConnected)
	lc.block(t, 1)
	backfilled := 0
	for len(seen) < 1+6+1 {
		m := next()
		if m.Flags&client.FlagBackfilled != 0 {
			backfilled++
		}
		assert.False(t, m.Gap(), "no gap: %v", m.Flags)
		seen = append(seen, logPlace(t, m.Data))
	}
	first := seen[0][0]
	want := [][2]uint64{{first, 0}, {first + 1, 0}, {first + 1, 1}, {first + 2, 0}, {first + 2, 1}, {first + 3, 0}, {first + 3, 1}, {first + 4, 0}}
	assert.Equal(t, want, seen, "every log once, in block and log order")
	assert.Equal(t, 6, backfilled, "the logs made during the outage")
}

// Through the sidecar, 20 unchanged ethclients each subscribe the
// emitter's logs twice on one connection; the sidecar's link to the node
// is cut while it makes 2 blocks of 2 logs: every subscription gets every
// log once, in order.
func TestEthclientLogsThroughASidecarOutage(t *testing.T) {
	lc := startLogChain(t)
	proxy := faultproxy.Start(t, lc.url[len("ws://"):])
	s, local := startFastSidecar(t, proxy.URL(lc.url))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const clients, logs = 20, 1 + 4 + 1
	q := geth.FilterQuery{Addresses: []common.Address{lc.contract}}
	var chans []chan types.Log
	for range clients {
		ec := dialClient(t, local)
		for range 2 {
			ch := make(chan types.Log, logs)
			sub, err := ec.SubscribeFilterLogs(ctx, q, ch)
			require.NoError(t, err)
			t.Cleanup(sub.Unsubscribe)
			chans = append(chans, ch)
		}
	}
	lc.block(t, 1)
	proxy.Down()
	require.Eventually(t, func() bool { return !s.Ready() }, 10*time.Second, 5*time.Millisecond)
	lc.block(t, 2)
	lc.block(t, 2)
	proxy.Heal()
	require.Eventually(t, s.Ready, 10*time.Second, 5*time.Millisecond)
	lc.block(t, 1)
	for i, ch := range chans {
		var got [][2]uint64
		for len(got) < logs {
			select {
			case l := <-ch:
				got = append(got, [2]uint64{l.BlockNumber, uint64(l.Index)})
			case <-ctx.Done():
				t.Fatalf("subscription %d: %v", i, got)
			}
		}
		first := got[0][0]
		assert.Equal(t, [][2]uint64{{first, 0}, {first + 1, 0}, {first + 1, 1}, {first + 2, 0}, {first + 2, 1}, {first + 3, 0}}, got,
			"subscription %d: every log once, in order", i)
	}
}

// go-ethereum's node reorganises away the block holding a log: it sends
// the log again with "removed": true, and the SDK flags it
// FlagRetracted.
func TestRemovedLogIsRetracted(t *testing.T) {
	lc := startLogChain(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, lc.url, client.WithProtocol(ethereum.Protocol()))
	require.NoError(t, err)
	defer c.Close()
	sub, err := c.Subscribe(ctx, []string{fmt.Sprintf(`["logs",{"address":%q}]`, lc.contract.Hex())})
	require.NoError(t, err)
	parent := lc.Commit() // an empty block to fork from
	lc.block(t, 1)
	var live client.Message
	select {
	case live = <-sub.C():
	case <-ctx.Done():
		t.Fatal("no log")
	}
	assert.Zero(t, live.Flags&client.FlagRetracted)
	require.NoError(t, lc.Fork(parent))
	lc.Rollback() // the log's transaction stays out of the fork
	for range 3 {
		lc.Commit()
	}
	for {
		select {
		case m := <-sub.C():
			if m.Flags&client.FlagRetracted != 0 {
				assert.Equal(t, logPlace(t, live.Data), logPlace(t, m.Data), "the same log, taken back")
				return
			}
		case <-ctx.Done():
			t.Fatal("the log was not taken back")
		}
	}
}
