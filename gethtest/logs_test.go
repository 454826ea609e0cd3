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
	_, err := lc.trySend(to, data)
	require.NoError(t, err)
}

// trySend is send off the test's goroutine; it returns the transaction
// sent.
func (lc *logChain) trySend(to *common.Address, data []byte) (*types.Transaction, error) {
	tx := types.NewTx(&types.DynamicFeeTx{ChainID: big.NewInt(1337), Nonce: lc.nonce, GasTipCap: big.NewInt(1e9),
		GasFeeCap: big.NewInt(100e9), Gas: 200_000, To: to, Data: data})
	signed, err := types.SignTx(tx, types.LatestSignerForChainID(big.NewInt(1337)), lc.key)
	if err != nil {
		return nil, err
	}
	if err := lc.Client().SendTransaction(context.Background(), signed); err != nil {
		return nil, err
	}
	lc.nonce++
	return signed, nil
}

// block makes a block holding n logs. The pool takes a transaction in
// the background: the block is made once the pool's pending nonce shows
// every one sent, or one could land in the next block.
func (lc *logChain) block(t *testing.T, n int) {
	t.Helper()
	require.NoError(t, lc.tryBlock(n))
}

// tryBlock is block off the test's goroutine. A transaction the pool
// holds but does not show pending for 100 ms (sent while it reset for
// the block just made: about once in 50 blocks made back to back) is
// taken out with the block's others (Rollback) and they are sent again.
func (lc *logChain) tryBlock(n int) error {
	sent := make([]*types.Transaction, n)
	for i := range sent {
		tx, err := lc.trySend(&lc.contract, nil)
		if err != nil {
			return err
		}
		sent[i] = tx
	}
	from := crypto.PubkeyToAddress(lc.key.PublicKey)
	stalled := time.Now().Add(100 * time.Millisecond)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		pending, err := lc.Client().PendingNonceAt(context.Background(), from)
		if err == nil && pending == lc.nonce {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the pool does not hold the block's %d transactions (pending nonce %d, sent %d): %v", n, pending, lc.nonce, err)
		}
		if time.Now().After(stalled) {
			lc.Rollback()
			for _, tx := range sent {
				if err := lc.Client().SendTransaction(context.Background(), tx); err != nil {
					return fmt.Errorf("sending again after a rollback: %w", err)
				}
			}
			stalled = time.Now().Add(100 * time.Millisecond)
		}
	}
	lc.Commit()
	return nil
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

// While go-ethereum's node makes blocks of 2 logs as fast as it can, the
// link is cut and restored again and again, each restore fetching the
// missed logs with eth_getLogs while more are made: the logs delivered
// are the node's own list of the filter's logs (eth_getLogs over the
// run, asked at the end), each once, in block and log order.
func TestNoLogTwiceWhileBlocksAreMadeDuringTheRestore(t *testing.T) {
	lc := startLogChain(t)
	proxy := faultproxy.Start(t, lc.url[len("ws://"):])
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, proxy.URL(lc.url), append(fastReconnect, client.WithProtocol(ethereum.Protocol()))...)
	require.NoError(t, err)
	defer c.Close()
	sub, err := c.Subscribe(ctx, []string{fmt.Sprintf(`["logs",{"address":%q}]`, lc.contract.Hex())})
	require.NoError(t, err)

	stop, made := make(chan struct{}), make(chan error, 1)
	go func() { // the node's blocks, throughout
		for {
			select {
			case <-stop:
				made <- nil
				return
			default:
				if err := lc.tryBlock(2); err != nil {
					made <- err
					return
				}
			}
		}
	}()
	var seen [][2]uint64
	backfilled := 0
	read := func(until time.Time) {
		for time.Now().Before(until) {
			select {
			case m := <-sub.C():
				seen = append(seen, logPlace(t, m.Data))
				if m.Flags&client.FlagBackfilled != 0 {
					backfilled++
				}
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
	for range 6 {
		read(time.Now().Add(60 * time.Millisecond))
		proxy.Down()
		waitState(t, ctx, c, client.StateReconnecting)
		read(time.Now().Add(30 * time.Millisecond))
		proxy.Heal()
		waitState(t, ctx, c, client.StateConnected)
	}
	close(stop)
	require.NoError(t, <-made)
	read(time.Now().Add(300 * time.Millisecond)) // the last blocks' logs
	require.Positive(t, backfilled, "the restores fetched what the outages missed")
	require.NotEmpty(t, seen)

	// The node's list, over the blocks the program saw from first to last.
	first, last := seen[0][0], seen[len(seen)-1][0]
	logs, err := lc.Client().FilterLogs(ctx, geth.FilterQuery{
		FromBlock: new(big.Int).SetUint64(first), ToBlock: new(big.Int).SetUint64(last), Addresses: []common.Address{lc.contract}})
	require.NoError(t, err)
	var want [][2]uint64
	for _, l := range logs {
		want = append(want, [2]uint64{l.BlockNumber, uint64(l.Index)})
	}
	for len(want) > 0 && want[0] != seen[0] { // subscribed after the first block's first logs
		want = want[1:]
	}
	require.Equal(t, want, seen, "every log of the node's list once, in order, none missing")
}
