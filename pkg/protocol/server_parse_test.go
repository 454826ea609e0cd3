package protocol_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/pkg/deribit"
	"github.com/wsfan/wsfan/pkg/ethereal"
	"github.com/wsfan/wsfan/pkg/ethereum"
	"github.com/wsfan/wsfan/pkg/okx"
	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// TestServerParsesSubscribes checks that every subscribe and unsubscribe
// the client half encodes, the server half reads back as the same
// operation, ids and topics.
func TestServerParsesSubscribes(t *testing.T) {
	names := map[string][]string{
		"thalex":   {"ticker.BTC-PERPETUAL.raw", "account.orders", "book.BTC-PERPETUAL.none.10.100ms"},
		"deribit":  {"book.BTC-PERPETUAL.100ms", "user.orders.any.any.raw"},
		"ethereum": {"newHeads", `["logs",{"address":"0x1"}]`},
		"ethereal": {"L2Book:BTCUSD", "OrderUpdate:sa-1"},
	}
	for name, h := range halves(t) {
		t.Run(name, func(t *testing.T) {
			ts := topics(t, h.client, names[name]...)
			keys := make([]string, len(ts))
			for i, tp := range ts {
				keys[i] = tp.Key
				if keys[i] == "" {
					keys[i] = h.server.SubscriptionID()
				}
			}
			for _, op := range []protocol.Op{protocol.OpSubscribe, protocol.OpUnsubscribe} {
				var b protocol.Batch
				want := names[name]
				if op == protocol.OpSubscribe {
					h.client.Subscribe(&b, ts, ids(), 0)
				} else {
					h.client.Unsubscribe(&b, ts, keys, ids(), 0)
					want = keys
				}
				var got []string
				var reqs []protocol.Incoming
				for _, m := range b.Messages {
					var err *protocol.Error
					reqs, _, err = h.server.ParseFrame(reqs, m)
					require.Nil(t, err, "%s", m)
				}
				for i, r := range reqs {
					require.Nil(t, r.Err, r.Method)
					assert.Equal(t, op, r.Op, r.Method)
					got = append(got, r.Topics...)
					for _, tp := range r.Topics {
						if op == protocol.OpSubscribe { // Thalex unsubscribes both scopes in one list
							assert.Equal(t, h.server.Private(tp), r.Private, "%s %s", r.Method, tp)
						}
					}
					if h.server.RPC() {
						assert.Equal(t, b.Requests[i].ID, uint64FromJSON(t, r.ID), "the request ids in order")
					} else {
						assert.Nil(t, r.ID)
					}
				}
				assert.ElementsMatch(t, want, got, op.String())
			}
		})
	}
}

func uint64FromJSON(t *testing.T, raw []byte) uint64 {
	t.Helper()
	var v uint64
	require.NoError(t, json.Unmarshal(raw, &v), "%s", raw)
	return v
}

// TestServerParsesCalls checks requests, the heartbeat handshake and its
// answer, as the client half encodes them.
func TestServerParsesCalls(t *testing.T) {
	for name, h := range halves(t) {
		if !h.server.RPC() {
			continue
		}
		req, err := h.client.AppendRequest(nil, 42, "public/get_time", []byte(`{"x":[1]}`))
		require.NoError(t, err)
		reqs, batch, rerr := h.server.ParseFrame(nil, req)
		require.Nil(t, rerr)
		assert.False(t, batch)
		require.Len(t, reqs, 1)
		assert.Equal(t, protocol.Incoming{ID: []byte("42"), Method: "public/get_time", Params: []byte(`{"x":[1]}`)}, reqs[0], name)
	}

	d := deribit.Protocol()
	hs := d.Handshake()
	require.Len(t, hs, 1)
	frame, err := d.AppendRequest(nil, 1, hs[0].Method, hs[0].Params)
	require.NoError(t, err)
	reqs, _, rerr := deribit.Server().ParseFrame(nil, frame)
	require.Nil(t, rerr)
	assert.Equal(t, protocol.OpHeartbeat, reqs[0].Op)
	assert.Equal(t, 30*time.Second, reqs[0].Interval)

	reqs, _, rerr = deribit.Server().ParseFrame(reqs[:0], d.HeartbeatReply(nil, 2))
	require.Nil(t, rerr)
	assert.Equal(t, protocol.OpHeartbeatReply, reqs[0].Op)
	assert.Equal(t, "2", string(reqs[0].ID))
}

func TestServerParseFrame(t *testing.T) {
	invalid := func(code int) *protocol.Error { return &protocol.Error{Code: code} }
	tests := []struct {
		name   string
		server protocol.Server
		frame  string
		batch  bool
		err    *protocol.Error     // compared by code
		reqs   []protocol.Incoming // compared without Err's message
	}{
		{name: "not JSON", server: thalex.Server(), frame: `{"id":10,"method":`, err: invalid(protocol.CodeParseError)},
		{name: "not an object", server: thalex.Server(), frame: `"hello"`, err: invalid(protocol.CodeParseError)},
		{name: "notification", server: thalex.Server(), frame: `{"method":"public/subscribe","params":{"channels":["a"]}}`,
			reqs: []protocol.Incoming{{Method: "public/subscribe", Params: []byte(`{"channels":["a"]}`), Op: protocol.OpSubscribe, Topics: []string{"a"}}}},
		{name: "null id is an id", server: ethereum.Server(), frame: `{"jsonrpc":"2.0","id":null,"method":"eth_chainId"}`,
			reqs: []protocol.Incoming{{ID: []byte("null"), Method: "eth_chainId"}}},
		{name: "no method", server: thalex.Server(), frame: `{"id":"x"}`,
			reqs: []protocol.Incoming{{ID: []byte(`"x"`), Err: invalid(protocol.CodeInvalidRequest)}}},
		{name: "channels missing", server: deribit.Server(), frame: `{"id":1,"method":"private/subscribe"}`,
			reqs: []protocol.Incoming{{ID: []byte("1"), Method: "private/subscribe", Op: protocol.OpSubscribe, Private: true, Err: invalid(protocol.CodeInvalidParams)}}},
		{name: "unsubscribe_all", server: deribit.Server(), frame: `{"id":1,"method":"public/unsubscribe_all","params":{}}`,
			reqs: []protocol.Incoming{{ID: []byte("1"), Method: "public/unsubscribe_all", Params: []byte("{}"), Op: protocol.OpUnsubscribeAll}}},
		{name: "another method of the subscribe family", server: thalex.Server(), frame: `{"id":1,"method":"public/subscriptions"}`,
			reqs: []protocol.Incoming{{ID: []byte("1"), Method: "public/subscriptions"}}},
		{name: "disable heartbeat", server: deribit.Server(), frame: `{"id":1,"method":"public/disable_heartbeat"}`,
			reqs: []protocol.Incoming{{ID: []byte("1"), Method: "public/disable_heartbeat", Op: protocol.OpHeartbeat}}},
		{name: "heartbeat of no interval", server: deribit.Server(), frame: `{"id":1,"method":"public/set_heartbeat","params":{"interval":0}}`,
			reqs: []protocol.Incoming{{ID: []byte("1"), Method: "public/set_heartbeat", Params: []byte(`{"interval":0}`), Op: protocol.OpHeartbeat, Err: invalid(protocol.CodeInvalidParams)}}},
		{name: "thalex has no heartbeat methods", server: thalex.Server(), frame: `{"id":1,"method":"public/test"}`,
			reqs: []protocol.Incoming{{ID: []byte("1"), Method: "public/test"}}},
		{name: "eth_subscribe without params", server: ethereum.Server(), frame: `{"id":1,"method":"eth_subscribe","params":[]}`,
			reqs: []protocol.Incoming{{ID: []byte("1"), Method: "eth_subscribe", Params: []byte("[]"), Op: protocol.OpSubscribe, Err: invalid(protocol.CodeInvalidParams)}}},
		{name: "eth_unsubscribe of two ids", server: ethereum.Server(), frame: `{"id":1,"method":"eth_unsubscribe","params":["0x1","0x2"]}`,
			reqs: []protocol.Incoming{{ID: []byte("1"), Method: "eth_unsubscribe", Params: []byte(`["0x1","0x2"]`), Op: protocol.OpUnsubscribe, Err: invalid(protocol.CodeInvalidParams)}}},
		{name: "eth_subscribe spaced", server: ethereum.Server(), frame: ` {"id":1,"method":"eth_subscribe","params":["logs", {"address": "0x1"}]} `,
			reqs: []protocol.Incoming{{ID: []byte("1"), Method: "eth_subscribe", Params: []byte(`["logs", {"address": "0x1"}]`), Op: protocol.OpSubscribe, Topics: []string{`["logs",{"address":"0x1"}]`}}}},

		{name: "batch", server: ethereum.Server(), batch: true,
			frame: `[{"jsonrpc":"2.0","id":1,"method":"eth_subscribe","params":["newHeads"]},7,{"jsonrpc":"2.0","method":"eth_blockNumber"}]`,
			reqs: []protocol.Incoming{
				{ID: []byte("1"), Method: "eth_subscribe", Params: []byte(`["newHeads"]`), Op: protocol.OpSubscribe, Topics: []string{"newHeads"}},
				{ID: []byte("null"), Err: invalid(protocol.CodeInvalidRequest)},
				{Method: "eth_blockNumber"},
			}},
		{name: "thalex batch", server: thalex.Server(), batch: true, frame: `[{"id":1,"method":"public/get_time"}]`,
			reqs: []protocol.Incoming{{ID: []byte("1"), Method: "public/get_time"}}},
		{name: "no deribit batch", server: deribit.Server(), batch: true, frame: `[{"jsonrpc":"2.0","id":1,"method":"public/test"}]`, err: invalid(protocol.CodeInvalidRequest)},
		{name: "empty batch", server: ethereum.Server(), batch: true, frame: `[]`, err: invalid(protocol.CodeInvalidRequest)},
		{name: "broken batch", server: ethereum.Server(), batch: true, frame: `[{"id":1}`, err: invalid(protocol.CodeParseError)},

		{name: "ethereal subscribe", server: ethereal.Server(), frame: `{"event":"subscribe","data":{"type":"L2Book","symbol":"BTCUSD"}}`,
			reqs: []protocol.Incoming{{Method: "subscribe", Op: protocol.OpSubscribe, Topics: []string{"L2Book:BTCUSD"}}}},
		{name: "ethereal subaccount unsubscribe", server: ethereal.Server(), frame: `{"event":"unsubscribe","data":{"type":"OrderUpdate","subaccountId":"sa-1"}}`,
			reqs: []protocol.Incoming{{Method: "unsubscribe", Op: protocol.OpUnsubscribe, Topics: []string{"OrderUpdate:sa-1"}}}},
		{name: "ethereal subscribe to nothing", server: ethereal.Server(), frame: `{"event":"subscribe","data":{"type":"L2Book"}}`,
			reqs: []protocol.Incoming{{Method: "subscribe", Op: protocol.OpSubscribe, Err: invalid(protocol.CodeInvalidParams)}}},
		{name: "ethereal other event", server: ethereal.Server(), frame: `{"event":"ping"}`,
			reqs: []protocol.Incoming{{Method: "ping"}}},
		{name: "ethereal garbage", server: ethereal.Server(), frame: `{"event":`, err: invalid(protocol.CodeParseError)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reqs, batch, err := tt.server.ParseFrame(nil, []byte(tt.frame))
			assert.Equal(t, tt.batch, batch)
			if tt.err != nil {
				require.NotNil(t, err)
				assert.Equal(t, tt.err.Code, err.Code, err.Message)
				assert.Empty(t, reqs)
				return
			}
			require.Nil(t, err)
			require.Len(t, reqs, len(tt.reqs))
			for i := range reqs {
				got, want := reqs[i], tt.reqs[i]
				if want.Err != nil {
					require.NotNil(t, got.Err)
					assert.Equal(t, want.Err.Code, got.Err.Code, got.Err.Message)
					assert.NotEmpty(t, got.Err.Message)
					got.Err, want.Err = nil, nil
				}
				assert.Equal(t, want, got)
			}
		})
	}
}

// A frame of another dialect is refused by an invalid request naming the
// dialect the server speaks, and a JSON-RPC server answers it even
// without an id (under a null one): before, Thalex, Deribit and Ethereum
// took an OKX or Ethereal frame as a notification and said nothing.
func TestForeignFrameNamesTheDialect(t *testing.T) {
	okxFrame := `{"op":"subscribe","args":[{"channel":"tickers","instId":"BTC-USDT"}]}`
	rpcFrame := `{"jsonrpc":"2.0","id":1,"method":"public/subscribe","params":{"channels":["ticker.BTC-PERPETUAL.raw"]}}`
	etherealFrame := `{"event":"subscribe","data":{"type":"Ticker","symbol":"BTCUSD"}}`
	for _, tc := range []struct {
		server protocol.Server
		frame  string
		code   int
		want   string
	}{
		{thalex.Server(), okxFrame, protocol.CodeInvalidRequest, "the thalex dialect, JSON-RPC 2.0"},
		{deribit.Server(), etherealFrame, protocol.CodeInvalidRequest, "the deribit dialect, JSON-RPC 2.0"},
		{ethereum.Server(), "[" + okxFrame + "]", protocol.CodeInvalidRequest, "the ethereum dialect, JSON-RPC 2.0"},
		{ethereal.Server(), okxFrame, protocol.CodeInvalidRequest, "the ethereal dialect"},
		{ethereal.Server(), rpcFrame, protocol.CodeInvalidRequest, "the ethereal dialect"},
		{okx.Server(), rpcFrame, okx.CodeInvalidRequest, "the okx dialect"},
	} {
		name := tc.server.Name() + " " + tc.frame
		reqs, _, err := tc.server.ParseFrame(nil, []byte(tc.frame))
		require.Nil(t, err, name)
		require.Len(t, reqs, 1, name)
		require.NotNil(t, reqs[0].Err, name)
		assert.Equal(t, tc.code, reqs[0].Err.Code, name)
		assert.Contains(t, reqs[0].Err.Message, tc.want, name)
		if strings.Contains(tc.want, "JSON-RPC") {
			assert.Equal(t, "null", string(reqs[0].ID), "%s: answered under a null id", name)
		}
	}
}
