package protocol_test

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/pkg/deribit"
	"github.com/wsfan/wsfan/pkg/ethereal"
	"github.com/wsfan/wsfan/pkg/ethereum"
	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// half is one dialect's two halves.
type half struct {
	client protocol.Protocol
	server protocol.Server
}

// halves returns every dialect's halves by name.
func halves(t testing.TB) map[string]half {
	t.Helper()
	out := make(map[string]half)
	for _, name := range []string{"thalex", "deribit", "ethereum", "ethereal"} {
		c, err := protocol.ByName(name)
		require.NoError(t, err)
		s, err := protocol.ServerByName(name)
		require.NoError(t, err)
		out[name] = half{c, s}
	}
	return out
}

func TestServerByName(t *testing.T) {
	for _, name := range []string{"thalex", "deribit", "ethereum", "ethereal"} {
		s, err := protocol.ServerByName(strings.ToUpper(name))
		require.NoError(t, err)
		assert.Equal(t, name, s.Name())
		p, err := protocol.ByName(strings.ToUpper(name))
		require.NoError(t, err)
		assert.Equal(t, name, p.Name())
	}
	_, err := protocol.ServerByName("binance")
	assert.ErrorContains(t, err, `unknown dialect "binance"`)
	assert.ErrorContains(t, err, `import _ "github.com/wsfan/wsfan/pkg/binance"`, "says how a dialect becomes known")
}

// TestServerNotificationWireFormat pins each dialect's notification to
// the bytes its servers send.
func TestServerNotificationWireFormat(t *testing.T) {
	data := []byte(`{"mark_price":68012.5}`)
	for name, want := range map[string]string{
		"thalex":   `{"channel_name":"ticker.BTC-PERPETUAL.raw","notification":{"mark_price":68012.5}}`,
		"deribit":  `{"jsonrpc":"2.0","method":"subscription","params":{"channel":"ticker.BTC-PERPETUAL.raw","data":{"mark_price":68012.5}}}`,
		"ethereum": `{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"0xcd0c","result":{"mark_price":68012.5}}}`,
	} {
		s, err := protocol.ServerByName(name)
		require.NoError(t, err)
		assert.Equal(t, want, string(s.AppendNotification(nil, "ticker.BTC-PERPETUAL.raw", "0xcd0c", data)), name)
	}
	frame := string(ethereal.Server().AppendNotification(nil, "L2Book:BTCUSD", "", []byte(`{"s":"BTCUSD"}`)))
	assert.Regexp(t, `^\{"e":"L2Book","t":\d{13},"data":\{"s":"BTCUSD"\}\}$`, frame)
}

// TestServerNotificationRoundTrip checks that what a server publishes,
// the client half classifies back to the same key and payload, and that
// the envelope around that payload rebuilds the frame.
func TestServerNotificationRoundTrip(t *testing.T) {
	cases := map[string]struct{ topic, subID, data, key string }{
		"thalex":   {topic: "ticker.BTC-PERPETUAL.raw", data: `{"mark_price":68012.5,"b":[[1,2]]}`, key: "ticker.BTC-PERPETUAL.raw"},
		"deribit":  {topic: "book.BTC-PERPETUAL.100ms", data: `{"change_id":2,"prev_change_id":1}`, key: "book.BTC-PERPETUAL.100ms"},
		"ethereum": {topic: `["logs",{"address":"0x1"}]`, subID: "0x4a8a4c0517381924f9838102c5a4dcb7", data: `{"number":"0x1b4"}`, key: "0x4a8a4c0517381924f9838102c5a4dcb7"},
		"ethereal": {topic: "L2Book:BTCUSD", data: `{"s":"BTCUSD","t":2,"pt":1,"a":[],"b":[]}`, key: "L2Book:BTCUSD"},
	}
	for name, h := range halves(t) {
		c := cases[name]
		t.Run(name, func(t *testing.T) {
			frame := h.server.AppendNotification([]byte("junk"), c.topic, c.subID, []byte(c.data))[4:]
			var f protocol.Frame
			require.NoError(t, h.client.Classify(frame, &f))
			assert.Equal(t, protocol.KindNotification, f.Kind)
			assert.Equal(t, c.key, string(f.Key))
			if name == "ethereal" {
				assert.Equal(t, string(frame), string(f.Data), "an Ethereal payload is the whole frame")
			} else {
				assert.Equal(t, c.data, string(f.Data))
			}

			prefix, suffix := h.server.Envelope(c.topic, c.subID)
			relayed := append(append(append([]byte(nil), prefix...), f.Data...), suffix...)
			assert.Equal(t, string(frame), string(relayed))
		})
	}
}

func TestServerResponseRoundTrip(t *testing.T) {
	for name, h := range halves(t) {
		t.Run(name, func(t *testing.T) {
			s := h.server
			result := s.AppendResult(nil, []byte("7"), []byte(`["a","b"]`))
			failure := s.AppendError(nil, []byte("8"), -32602, "bad \"x\"\n", []byte(`{"reason":"r"}`))
			if !s.RPC() {
				// Ethereal's status frames: no id, a refusal names a code.
				var f protocol.Frame
				require.NoError(t, h.client.Classify(result, &f))
				assert.Equal(t, protocol.KindResponse, f.Kind)
				assert.False(t, f.HasID)
				assert.NotNil(t, f.Result)
				require.NoError(t, h.client.Classify(failure, &f))
				assert.Equal(t, protocol.KindResponse, f.Kind)
				assert.False(t, f.HasID)
				assert.JSONEq(t, `{"ok":false,"code":"INVALID_REQUEST","message":"bad \"x\"\n"}`, string(f.Error))
				return
			}
			var f protocol.Frame
			require.NoError(t, h.client.Classify(result, &f))
			assert.Equal(t, protocol.KindResponse, f.Kind)
			assert.True(t, f.HasID)
			assert.Equal(t, uint64(7), f.ID)
			assert.Equal(t, `["a","b"]`, string(f.Result))

			require.NoError(t, h.client.Classify(failure, &f))
			assert.Equal(t, protocol.KindResponse, f.Kind)
			assert.Equal(t, uint64(8), f.ID)
			assert.JSONEq(t, `{"code":-32602,"message":"bad \"x\"\n","data":{"reason":"r"}}`, string(f.Error))

			anonymous := s.AppendError(nil, nil, protocol.CodeParseError, "parse error", nil)
			assert.Contains(t, string(anonymous), `"id":null,"error":{"code":-32700,"message":"parse error"}}`)
			require.NoError(t, h.client.Classify(anonymous, &f))
			assert.False(t, f.HasID)
		})
	}
}

func TestServerResponseWireFormat(t *testing.T) {
	assert.Equal(t, `{"id":2,"result":["x"]}`, string(thalex.Server().AppendResult(nil, []byte("2"), []byte(`["x"]`))))
	assert.Equal(t, `{"jsonrpc":"2.0","id":2,"error":{"code":4,"message":"throttle exceeded"}}`,
		string(deribit.Server().AppendError(nil, []byte("2"), 4, "throttle exceeded", nil)))

	in := time.UnixMicro(1737043200000001)
	out := in.Add(5 * time.Microsecond)
	frame := deribit.AppendResult(nil, []byte("3600"), []byte(`"ok"`), in, out, true)
	assert.Equal(t, `{"jsonrpc":"2.0","id":3600,"result":"ok","usIn":1737043200000001,"usOut":1737043200000006,"usDiff":5,"testnet":true}`, string(frame))
	var f protocol.Frame
	require.NoError(t, deribit.Protocol().Classify(frame, &f))
	assert.Equal(t, uint64(3600), f.ID)
	assert.Equal(t, `"ok"`, string(f.Result))
}

// TestServerErrorEscapes checks that messages of any bytes make valid
// JSON that decodes to them (invalid UTF-8 to U+FFFD).
func TestServerErrorEscapes(t *testing.T) {
	for _, msg := range []string{"plain", "q\"b\\s/", "nl\n\r\t\x00\x1f", "é ✓ 😀", "bad \xff utf8"} {
		frame := ethereum.Server().AppendError(nil, []byte("1"), 1, msg, nil)
		var v struct {
			Error struct{ Message string }
		}
		require.NoError(t, json.Unmarshal(frame, &v), "%q", frame)
		assert.Equal(t, strings.ToValidUTF8(msg, "\uFFFD"), v.Error.Message)
	}
}

// TestServerAcksRoundTrip checks that the client half's Ack reads the
// keys a server acknowledged, and nothing it refused.
func TestServerAcksRoundTrip(t *testing.T) {
	th := thalex.Protocol()
	ts := topics(t, th, "a", "b", "c")
	var b protocol.Batch
	th.Subscribe(&b, ts, ids(), 0)
	result := thalex.Server().AppendSubscribed(nil, []string{"a", "c"})
	assert.Equal(t, `["a","c"]`, string(result))
	keys := make([]string, 3)
	require.NoError(t, th.Ack(&b.Requests[0], result, keys))
	assert.Equal(t, []string{"a", "", "c"}, keys)
	assert.Equal(t, `[]`, string(deribit.Server().AppendSubscribed(nil, nil)))
	assert.Equal(t, `["b"]`, string(deribit.Server().AppendUnsubscribed(nil, []string{"b"})))

	eth := ethereum.Protocol()
	es := topics(t, eth, "newHeads")
	b = protocol.Batch{}
	eth.Subscribe(&b, es, ids(), 0)
	srv := ethereum.Server()
	id := srv.SubscriptionID()
	require.NoError(t, eth.Ack(&b.Requests[0], srv.AppendSubscribed(nil, []string{id}), keys[:1]))
	assert.Equal(t, id, keys[0])
	assert.Equal(t, "true", string(srv.AppendUnsubscribed(nil, []string{id})))
	assert.Equal(t, "false", string(srv.AppendUnsubscribed(nil, nil)))

	assert.Empty(t, ethereal.Server().AppendSubscribed(nil, []string{"L2Book:BTCUSD"}))
}

func TestServerEvents(t *testing.T) {
	var f protocol.Frame
	hb := deribit.Server().AppendHeartbeat(nil)
	require.NoError(t, deribit.Protocol().Classify(hb, &f))
	assert.Equal(t, protocol.KindHeartbeat, f.Kind)

	notice := thalex.Server().AppendReconnectNotice(nil)
	assert.Equal(t, `{"channel_name":"system","notification":{"event":"reconnect"}}`, string(notice))
	require.NoError(t, thalex.Protocol().Classify(notice, &f))
	assert.Equal(t, protocol.KindEvent, f.Kind)
	assert.Equal(t, protocol.EventReconnect, f.Event)

	for _, s := range []protocol.Server{thalex.Server(), ethereum.Server(), ethereal.Server()} {
		assert.Empty(t, s.AppendHeartbeat(nil), s.Name())
	}
	for _, s := range []protocol.Server{deribit.Server(), ethereum.Server(), ethereal.Server()} {
		assert.Empty(t, s.AppendReconnectNotice(nil), s.Name())
	}
}

func TestServerSubscriptionsAndPrivacy(t *testing.T) {
	eth := ethereum.Server()
	a, b := eth.SubscriptionID(), eth.SubscriptionID()
	assert.Regexp(t, regexp.MustCompile(`^0x[0-9a-f]{32}$`), a)
	assert.NotEqual(t, a, b)
	for _, s := range []protocol.Server{thalex.Server(), deribit.Server(), ethereal.Server()} {
		assert.Empty(t, s.SubscriptionID(), s.Name())
	}

	// The server half agrees with the client half on what is private.
	for name, h := range halves(t) {
		for _, topic := range []string{"account.orders", "session.orders", "user.orders.any.any.raw", "ticker.BTC-PERPETUAL.raw"} {
			tp, err := h.client.NewTopic(topic)
			if err != nil {
				continue // not a topic of this dialect
			}
			assert.Equal(t, tp.Private, h.server.Private(topic), "%s %s", name, topic)
		}
	}
	assert.True(t, thalex.Server().Private("account.orders"))
	assert.True(t, deribit.Server().Private("user.orders.any.any.raw"))
}

// TestAppendNotificationAllocs holds the publishing path to no
// allocation once dst has room.
func TestAppendNotificationAllocs(t *testing.T) {
	data := []byte(`{"best_bid_price":65000.5,"best_ask_price":65001}`)
	dst := make([]byte, 0, 512)
	for name, h := range halves(t) {
		allocs := testing.AllocsPerRun(100, func() {
			dst = h.server.AppendNotification(dst[:0], "ticker.BTC-PERPETUAL.raw", "0xcd0c3e8af590364c09d0fa6a1210faf5", data)
		})
		assert.Zero(t, allocs, name)
	}
}

// BenchmarkAppendNotification times encoding one ticker notification:
// what a test exchange spends per frame it publishes.
func BenchmarkAppendNotification(b *testing.B) {
	data := []byte(`{"best_bid_price":65000.5,"best_bid_amount":1.25,"best_ask_price":65001,"best_ask_amount":0.5}`)
	for _, name := range []string{"thalex", "deribit", "ethereum", "ethereal"} {
		s, err := protocol.ServerByName(name)
		require.NoError(b, err)
		b.Run(name, func(b *testing.B) {
			dst := make([]byte, 0, 512)
			b.ReportAllocs()
			for b.Loop() {
				dst = s.AppendNotification(dst[:0], "ticker.BTC-PERPETUAL.raw", "0xcd0c3e8af590364c09d0fa6a1210faf5", data)
			}
		})
	}
}
