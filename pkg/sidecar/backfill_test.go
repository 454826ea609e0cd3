package sidecar_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/ethereum"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// chainHead is block n of a chain, as newHeads sends it.
func chainHead(n uint64) []byte {
	return fmt.Appendf(nil, `{"number":"0x%x","hash":"0x%064x","parentHash":"0x%064x"}`, n, n+1, n)
}

// A complete backfill is told once: an opted-in program gets one
// "backfilled" notice before the heads the sidecar fetched after an
// upstream reconnect, and no "reconnected" one before the next live
// head, which follows the last fetched exactly (it got both: the live
// head still carried the reconnect's mark). The SDK behind the sidecar
// sees the first fetched head flagged as it would directly, and the
// live one unflagged.
func TestCompleteBackfillIsOneNotice(t *testing.T) {
	var current atomic.Uint64
	r := newRig(t, ethereum.Name, nil)
	r.up.Handle("eth_blockNumber", func(json.RawMessage) (any, *protocol.Error) {
		return fmt.Sprintf("0x%x", current.Load()), nil
	})
	r.up.Handle("eth_getBlockByNumber", func(params json.RawMessage) (any, *protocol.Error) {
		var args []any
		if err := json.Unmarshal(params, &args); err != nil || len(args) == 0 {
			return nil, protocol.NewError(protocol.CodeInvalidParams, "bad params", nil)
		}
		var n uint64
		_, _ = fmt.Sscanf(fmt.Sprint(args[0]), "0x%x", &n)
		return json.RawMessage(chainHead(n)), nil
	})
	ctx := testutil.Context(t)
	var dc dialectCase
	for _, d := range dialects {
		if d.d == ethereum.Name {
			dc = d
		}
	}
	ws := r.dialWith(t, "?notify=gaps", nil)
	subscribeAll(t, dc, ws)
	sdk, err := client.Dial(ctx, r.wsURL(), client.WithProtocol(ethereum.Protocol()))
	require.NoError(t, err)
	defer func() { _ = sdk.Close() }()
	sub, err := sdk.Subscribe(ctx, []string{dc.topic})
	require.NoError(t, err)
	r.waitClients(t, 2, 1)
	require.NoError(t, r.up.WaitSubscribers(ctx, dc.topic, 1))

	publish := func(n uint64) {
		current.Store(n)
		r.up.Publish(dc.topic, chainHead(n))
	}
	var frames []string
	read := func(n int) {
		for range n {
			frames = append(frames, testutil.Recv(t, ws))
		}
	}
	var msgs []client.Message
	receiveN := func(n int) {
		for range n {
			select {
			case m := <-sub.C():
				msgs = append(msgs, m)
			case <-ctx.Done():
				t.Fatal("the SDK behind the sidecar got too few heads")
			}
		}
	}
	for n := uint64(1); n <= 3; n++ {
		publish(n)
	}
	read(3)
	receiveN(3)

	r.up.Stop()
	current.Store(6) // heads 4 to 6 were made while the sidecar was away
	require.NoError(t, r.up.Start())
	read(4) // a notice and the three fetched heads
	receiveN(3)
	publish(7)
	read(1)
	receiveN(1)

	var notices []string
	var heads []string
	for _, f := range frames {
		if n, ok := protocol.ParseGapNotice([]byte(f)); ok {
			notices = append(notices, n.Cause)
			continue
		}
		i := strings.Index(f, `"number":"`)
		require.GreaterOrEqual(t, i, 0, f)
		heads = append(heads, f[i+len(`"number":"`):i+len(`"number":"`)+3])
	}
	assert.Equal(t, []string{protocol.GapBackfilled}, notices, "one notice")
	assert.Equal(t, []string{"0x1", "0x2", "0x3", "0x4", "0x5", "0x6", "0x7"}, heads)
	require.Len(t, msgs, 7)
	assert.Equal(t, client.FlagBackfilled|client.FlagReconnected, msgs[3].Flags, "the first fetched head, as directly")
	assert.Zero(t, msgs[6].Flags, "the live head after a complete backfill")
}
