package protocol_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/pkg/deribit"
	"github.com/wsfan/wsfan/pkg/ethereal"
	"github.com/wsfan/wsfan/pkg/ethereum"
	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/thalex"
)

func ids() func() uint64 {
	var n uint64
	return func() uint64 { n++; return n }
}

func topics(t *testing.T, p protocol.Protocol, names ...string) []*protocol.Topic {
	t.Helper()
	out := make([]*protocol.Topic, len(names))
	for i, n := range names {
		tp, err := p.NewTopic(n)
		require.NoError(t, err)
		out[i] = tp
	}
	return out
}

func TestAppendRequestEscapesAndDefaultsParams(t *testing.T) {
	b, err := thalex.Protocol().AppendRequest(nil, 9, "public/\"odd\"\n", nil)
	require.NoError(t, err)
	assert.JSONEq(t, `{"jsonrpc":"2.0","id":9,"method":"public/\"odd\"\n","params":{}}`, string(b))
	b, err = ethereum.Protocol().AppendRequest(b[:0], 10, "eth_chainId", nil)
	require.NoError(t, err)
	assert.Equal(t, `{"jsonrpc":"2.0","id":10,"method":"eth_chainId","params":[]}`, string(b))
	_, err = ethereal.Protocol().AppendRequest(nil, 1, "x", nil)
	assert.ErrorIs(t, err, protocol.ErrUnsupported)
}

func TestChannelSubscribeSplitsPrivateAndChunks(t *testing.T) {
	p := thalex.Protocol()
	var b protocol.Batch
	p.Subscribe(&b, topics(t, p, "ticker.A", "account.orders", "ticker.B", "ticker.C"), ids(), 2)
	require.Len(t, b.Messages, 3)
	assert.Equal(t, `{"jsonrpc":"2.0","id":1,"method":"public/subscribe","params":{"channels":["ticker.A","ticker.B"]}}`, string(b.Messages[0]))
	assert.Equal(t, `{"jsonrpc":"2.0","id":2,"method":"public/subscribe","params":{"channels":["ticker.C"]}}`, string(b.Messages[1]))
	assert.Equal(t, `{"jsonrpc":"2.0","id":3,"method":"private/subscribe","params":{"channels":["account.orders"]}}`, string(b.Messages[2]))
	require.Len(t, b.Requests, 3)
	assert.Equal(t, uint64(3), b.Requests[2].ID)
	assert.Equal(t, "account.orders", b.Requests[2].Topics[0].Name)

	keys := make([]string, 2)
	require.NoError(t, p.Ack(&b.Requests[0], []byte(`["ticker.B"]`), keys))
	assert.Equal(t, []string{"", "ticker.B"}, keys, "a channel missing from the accepted list is refused")
	assert.Error(t, p.Ack(&b.Requests[0], []byte(`{"oops":1}`), keys))
}

func TestEthereumSubscribeIsOneBatchArray(t *testing.T) {
	p := ethereum.Protocol()
	var b protocol.Batch
	p.Subscribe(&b, topics(t, p, "newHeads", ` ["logs", {"address":"0x1"}] `), ids(), 0)
	require.Len(t, b.Messages, 1)
	assert.Equal(t, `[{"jsonrpc":"2.0","id":1,"method":"eth_subscribe","params":["newHeads"]},`+
		`{"jsonrpc":"2.0","id":2,"method":"eth_subscribe","params":["logs",{"address":"0x1"}]}]`, string(b.Messages[0]))
	require.Len(t, b.Requests, 2)

	keys := make([]string, 1)
	require.NoError(t, p.Ack(&b.Requests[1], []byte(`"0xabc"`), keys))
	assert.Equal(t, "0xabc", keys[0])

	b.Reset()
	p.Unsubscribe(&b, topics(t, p, "newHeads"), []string{"0xabc"}, ids(), 0)
	assert.Equal(t, `{"jsonrpc":"2.0","id":1,"method":"eth_unsubscribe","params":["0xabc"]}`, string(b.Messages[0]))

	_, err := p.NewTopic(`["logs",`)
	assert.ErrorIs(t, err, protocol.ErrInvalidTopic)
}

func TestEtherealSubscribeSharesCachedFrames(t *testing.T) {
	p := ethereal.Protocol()
	tp := topics(t, p, "L2Book:BTCUSD", "OrderFill:0f6b")
	var b protocol.Batch
	p.Subscribe(&b, tp, ids(), 0)
	require.Len(t, b.Messages, 2)
	assert.Equal(t, `{"event":"subscribe","data":{"type":"L2Book","symbol":"BTCUSD"}}`, string(b.Messages[0]))
	assert.Equal(t, `{"event":"subscribe","data":{"type":"OrderFill","subaccountId":"0f6b"}}`, string(b.Messages[1]))
	var again protocol.Batch
	p.Subscribe(&again, tp, ids(), 0)
	assert.Same(t, &b.Messages[0][0], &again.Messages[0][0], "reconnects reuse the cached bytes")
	assert.True(t, tp[0].Sequenced)
	_, err := p.NewTopic("L2Book")
	assert.ErrorIs(t, err, protocol.ErrInvalidTopic)
}

func TestDeribitHandshakeAndHeartbeatReply(t *testing.T) {
	calls := deribit.Protocol().Handshake()
	require.Len(t, calls, 1)
	assert.Equal(t, "public/set_heartbeat", calls[0].Method)
	assert.JSONEq(t, `{"interval":30}`, string(calls[0].Params))
	assert.Empty(t, deribit.Protocol(deribit.WithHeartbeat(0)).Handshake())
	reply := deribit.Protocol().HeartbeatReply(nil, 12)
	assert.Equal(t, `{"jsonrpc":"2.0","id":12,"method":"public/test","params":{}}`, string(reply))
}

func TestSequence(t *testing.T) {
	id, prev, ok := deribit.Protocol().Sequence([]byte(`{"type":"change","prev_change_id":4,"instrument_name":"X","change_id":5,"bids":[]}`))
	assert.True(t, ok)
	assert.Equal(t, [2]uint64{5, 4}, [2]uint64{id, prev})
	id, prev, ok = deribit.Protocol().Sequence([]byte(`{"type":"snapshot","change_id":9}`))
	assert.True(t, ok)
	assert.Equal(t, [2]uint64{9, 0}, [2]uint64{id, prev})
	id, prev, ok = ethereal.Protocol().Sequence([]byte(`{"e":"L2Book","t":99,"data":{"s":"BTCUSD","t":7,"pt":6}}`))
	assert.True(t, ok)
	assert.Equal(t, [2]uint64{7, 6}, [2]uint64{id, prev})
	_, _, ok = deribit.Protocol().Sequence([]byte(`{"bids":[]}`))
	assert.False(t, ok)
}

func TestByName(t *testing.T) {
	for _, n := range []string{"thalex", "deribit", "ethereum", "ethereal"} {
		p, err := protocol.ByName(n)
		require.NoError(t, err)
		assert.Equal(t, n, p.Name())
	}
	_, err := protocol.ByName("binance")
	assert.Error(t, err)
}

// TestFastPathAgreesWithDecoding checks notification slicing against
// encoding/json on generated frames of every dialect.
func TestFastPathAgreesWithDecoding(t *testing.T) {
	for i := range 200 {
		payload := fmt.Sprintf(`{"n":%d,"s":"x\"}y","a":[%d,{"b":"]"}]}`, i, i)
		frames := map[protocol.Protocol]string{
			thalex.Protocol():   fmt.Sprintf(`{"channel_name":"c%d","notification":%s}`, i, payload),
			deribit.Protocol():  fmt.Sprintf(`{"jsonrpc":"2.0","method":"subscription","params":{"channel":"c%d","data":%s}}`, i, payload),
			ethereum.Protocol(): fmt.Sprintf(`{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"c%d","result":%s}}`, i, payload),
		}
		for p, frame := range frames {
			var f protocol.Frame
			require.NoError(t, p.Classify([]byte(frame), &f))
			assert.Equal(t, fmt.Sprintf("c%d", i), string(f.Key))
			var want, got any
			require.NoError(t, json.Unmarshal([]byte(payload), &want))
			require.NoError(t, json.Unmarshal(f.Data, &got), p.Name())
			assert.Equal(t, want, got)
		}
	}
}

func TestAppendJSONString(t *testing.T) {
	for s, want := range map[string]string{
		"ticker.BTC-PERPETUAL.raw": `"ticker.BTC-PERPETUAL.raw"`,
		"q\"b\\s/":                 `"q\"b\\s/"`,
		"\n\r\t\x00\x1f\x7f":       `"\n\r\t\u0000\u001f` + "\x7f" + `"`,
		"é ✓ 😀":                    `"é ✓ 😀"`,
		"bad \xff utf8":            `"bad \ufffd utf8"`,
	} {
		got := protocol.AppendJSONString([]byte("x"), s)
		assert.Equal(t, "x"+want, string(got))
		var back string
		require.NoError(t, json.Unmarshal(got[1:], &back))
		assert.Equal(t, strings.ToValidUTF8(s, "\uFFFD"), back)
	}
}
