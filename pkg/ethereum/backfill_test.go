package ethereum_test

import (
	"encoding/json"
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/ethereum"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// The providers' refusals of an eth_getLogs over too much, each with its
// own words, and what is not one.
func TestTooMuch(t *testing.T) {
	errs := ethereum.Protocol().Venue().Errors
	tooMuch := func(code int, message string) bool { return errs.ClassifyError(code, message).RangeTooLarge }
	assert.True(t, tooMuch(-32005, "query returned more than 10000 results"), "Infura")
	assert.True(t, tooMuch(-32602, "Log response size exceeded. You can make eth_getLogs requests with up to a 2K block range"), "Alchemy")
	assert.True(t, tooMuch(-32000, "response too large"), "a generic one")
	assert.False(t, tooMuch(-32005, "limit exceeded"), "a rate limit is no size")
	assert.False(t, tooMuch(-32602, "invalid argument"))
}

// A provider that refuses an eth_getLogs over more than 8 blocks, with
// Infura's words: after an outage of 28 blocks the client fetches the
// missed logs in halves until each range is taken, and delivers each
// once, in block order, flagged backfilled.
func TestLogsBackfillHalvesARefusedRange(t *testing.T) {
	srv := exchangetest.NewServer(ethereum.Name)
	t.Cleanup(srv.Close)
	var head atomic.Uint64
	head.Store(100)
	srv.Handle("eth_blockNumber", func(json.RawMessage) (any, *protocol.Error) { return fmt.Sprintf("0x%x", head.Load()), nil })
	var refused atomic.Int32
	srv.Handle("eth_getLogs", func(params json.RawMessage) (any, *protocol.Error) {
		var p []struct{ FromBlock, ToBlock string }
		if err := json.Unmarshal(params, &p); err != nil || len(p) != 1 {
			return nil, &protocol.Error{Code: -32602, Message: "invalid params"}
		}
		from, _ := strconv.ParseUint(p[0].FromBlock[2:], 16, 64)
		to, _ := strconv.ParseUint(p[0].ToBlock[2:], 16, 64)
		if to-from > 8 {
			refused.Add(1)
			return nil, &protocol.Error{Code: -32005, Message: "query returned more than 10000 results"}
		}
		var logs []map[string]string
		for n := from; n <= to; n++ {
			logs = append(logs, map[string]string{"address": "0x01", "blockNumber": fmt.Sprintf("0x%x", n), "logIndex": "0x0"})
		}
		return logs, nil
	})
	c, err := client.Dial(testutil.Context(t), srv.URL(), client.WithProtocol(ethereum.Protocol()),
		client.WithReconnectWait(5*time.Millisecond, 20*time.Millisecond))
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	const topic = `["logs",{"address":"0x01"}]`
	sub, err := c.Subscribe(testutil.Context(t), []string{topic})
	require.NoError(t, err)

	head.Store(128)
	srv.DropConnections()
	var blocks []uint64
	for len(blocks) < 28 {
		select {
		case m := <-sub.C():
			require.NotZero(t, m.Flags&client.FlagBackfilled, "%v", m.Flags)
			var l struct{ BlockNumber string }
			require.NoError(t, json.Unmarshal(m.Data, &l))
			n, _ := strconv.ParseUint(l.BlockNumber[2:], 16, 64)
			blocks = append(blocks, n)
		case <-testutil.Context(t).Done():
			t.Fatalf("backfilled %v", blocks)
		}
	}
	for i, n := range blocks {
		assert.Equal(t, uint64(101+i), n)
	}
	assert.Positive(t, refused.Load(), "the whole range was refused first")
}

// A head's position is its number, wherever the key stands among the
// head's fields, read the way Link reads it (the two never disagree); a
// log's is its block and index.
func TestPositionOfAHead(t *testing.T) {
	p := ethereum.Protocol()
	rec, messages := p.Venue().Recoverer, p.Venue().Messages
	heads, err := p.NewTopic("newHeads")
	require.NoError(t, err)
	hash := func(n int) string { return fmt.Sprintf(`"0x%064x"`, n) }
	for _, head := range []string{
		`{"number":"0x10","hash":` + hash(2) + `,"parentHash":` + hash(1) + `}`,
		`{"parentHash":` + hash(1) + `,"logsBloom":"0x00","hash":` + hash(2) + `,"blockNumber":"0x1","number":"0x10"}`,
		`{"hash":` + hash(2) + `,"parentHash":` + hash(1) + `,"extraData":"0x6e756d626572","number":"0x10"}`,
	} {
		pos, ok := rec.Position(heads, []byte(head))
		require.True(t, ok, head)
		assert.Equal(t, uint64(0x10), pos, head)
		number, _, _, ok := messages.Link([]byte(head))
		require.True(t, ok, head)
		assert.Equal(t, number, pos, "Link reads the same number: %s", head)
	}
	_, ok := rec.Position(heads, []byte(`{"hash":`+hash(2)+`}`))
	assert.False(t, ok, "a head without its number has no place")
}
