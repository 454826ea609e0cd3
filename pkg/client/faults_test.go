package client_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// badFrame is a frame a server should never send, and the drop reason it
// is counted under ("" when any reason will do).
type badFrame struct {
	name   string
	frame  string
	reason string
}

// badFrames lists, per dialect, frames that must be dropped and counted.
func badFrames(dialect string) []badFrame {
	common := []badFrame{
		{"not json", `not json at all`, "malformed"},
		{"truncated", `{"id":`, "malformed"},
		{"invalid utf8", "\xff\xfe\xfd{{", "malformed"},
		{"empty", ``, ""},
		{"null", `null`, ""},
		{"number", `42`, ""},
		{"string", `"hello"`, ""},
		{"empty object", `{}`, ""},
		{"unbalanced", `{"a":[1,2}`, ""},
		{"deep nesting", strings.Repeat("[", 100000) + strings.Repeat("]", 100000), ""},
		{"deep object", strings.Repeat(`{"a":`, 50000) + "1" + strings.Repeat("}", 50000), ""},
		{"huge number id", `{"jsonrpc":"2.0","id":184467440737095516160,"result":1}`, ""},
		{"negative id", `{"jsonrpc":"2.0","id":-1,"result":1}`, ""},
		{"fraction id", `{"jsonrpc":"2.0","id":1.5,"result":1}`, ""},
		{"string id", `{"jsonrpc":"2.0","id":"abc","result":1}`, ""},
	}
	var specific []badFrame
	switch dialect {
	case "thalex":
		specific = []badFrame{
			{"unknown id", `{"id":987654,"result":1}`, "unknown_id"},
			{"unknown id error", `{"id":987655,"error":{"code":1,"message":"x"}}`, "unknown_id"},
			{"unknown topic", `{"channel_name":"ticker.NOPE.raw","notification":{"p":1}}`, "unrouted"},
			{"truncated notification", `{"channel_name":"ticker.BTC-PERPETUAL.raw","notification":{"p":1}`, ""},
			{"notification without payload", `{"channel_name":"ticker.BTC-PERPETUAL.raw"}`, ""},
		}
	case "deribit":
		specific = []badFrame{
			{"unknown id", `{"jsonrpc":"2.0","id":987654,"result":1}`, "unknown_id"},
			{"unknown topic", `{"jsonrpc":"2.0","method":"subscription","params":{"channel":"ticker.NOPE.100ms","data":{}}}`, "unrouted"},
			{"truncated notification", `{"jsonrpc":"2.0","method":"subscription","params":{"channel":"ticker.BTC-PERPETUAL.100ms","data":{"p":1}}`, ""},
			{"unknown method", `{"jsonrpc":"2.0","method":"nope","params":{}}`, ""},
		}
	case "ethereum":
		specific = []badFrame{
			{"unknown id", `{"jsonrpc":"2.0","id":987654,"result":1}`, "unknown_id"},
			{"unknown id in batch", `[{"jsonrpc":"2.0","id":987655,"result":1}]`, "unknown_id"},
			{"garbage in batch", `[1,"x",null]`, ""}, // one drop per element
			{"unknown subscription", `{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"0xdead","result":{}}}`, "unrouted"},
			{"truncated notification", `{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"0xdead","result":{"p":1}}`, ""},
			{"unterminated batch", `[{"jsonrpc":"2.0","id":1,"result":1}`, ""},
		}
	case "ethereal":
		specific = []badFrame{
			{"unknown topic", `{"e":"L2Book","t":1,"data":{"s":"NOPE"}}`, "unrouted"},
			{"no symbol", `{"e":"L2Book","t":1,"data":{}}`, ""},
			{"long type", `{"e":"` + strings.Repeat("x", 200) + `","t":1,"data":{"s":"BTCUSD"}}`, ""},
			{"truncated after the symbol", `{"e":"L2Book","t":1,"data":{"s":"BTCUSD"}`, "malformed"},
			{"truncated before the symbol", `{"e":"L2Book","t":1,"data":{"a":[1,2`, ""},
		}
	}
	return append(common, specific...)
}

// Bad input never panics, never stalls the reader and never drops the
// connection: each bad frame is counted as a drop (by reason), nothing
// reaches a subscription, and calls and messages carry on.
func TestBadInputIsDroppedAndCounted(t *testing.T) {
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			srv := newServer(t, d.server)
			srv.Handle("echo", func(p json.RawMessage) (any, *protocol.Error) { return p, nil })
			reg := prometheus.NewRegistry()
			c := dial(t, srv, d.proto(), client.WithMetrics(reg, "x"))
			ctx := testutil.Context(t)
			topic := d.topics[0]
			sub, err := c.Subscribe(ctx, []string{topic})
			require.NoError(t, err)
			require.NoError(t, srv.WaitSubscribers(ctx, topic, 1))
			drainEvents(c)

			total := func() float64 {
				var n float64
				for _, r := range []string{"malformed", "unrouted", "unknown_id", "oversized", "binary"} {
					n += dropped(t, reg, r)
				}
				return n
			}
			seq := uint64(0)
			stillWorks := func(what string) {
				t.Helper()
				seq++
				srv.Publish(topic, payload(d.name, topic, int(seq)))
				m := receive(t, sub)
				require.Equal(t, seq, m.Seq, "after %s: the next message is the one published, nothing in between", what)
				require.Contains(t, string(m.Data), fmt.Sprintf(`"n":%d`, seq))
				if d.name != "ethereal" {
					var out []int
					require.NoError(t, c.Call(ctx, "echo", []int{int(seq)}, &out), "after %s", what)
					require.Equal(t, []int{int(seq)}, out)
				}
			}
			stillWorks("nothing")

			for _, bf := range badFrames(d.name) {
				before, beforeReason := total(), 0.0
				if bf.reason != "" {
					beforeReason = dropped(t, reg, bf.reason)
				}
				require.Equal(t, 1, srv.PublishRaw([]byte(bf.frame)), bf.name)
				require.Eventually(t, func() bool { return total() > before }, 5*time.Second, time.Millisecond,
					"%s: not counted as a drop", bf.name)
				if bf.reason != "" {
					assert.Equal(t, beforeReason+1, dropped(t, reg, bf.reason), bf.name)
				}
				stillWorks(bf.name)
			}

			// Binary garbage.
			before := dropped(t, reg, "binary")
			require.Equal(t, 1, srv.SendBinary([]byte{0, 1, 2, 0xff, '{'}))
			require.Eventually(t, func() bool { return dropped(t, reg, "binary") == before+1 }, 5*time.Second, time.Millisecond)
			stillWorks("binary")

			requireNoEvent(t, c, client.Disconnected, 0)
			assert.Equal(t, client.StateConnected, c.State())
			assert.Zero(t, metric(t, reg, "wsfan_client_reconnects_total", nil))
			requireOpen(t, sub)
		})
	}
}

// Frames over the read limit, within the first read buffer and far past
// it, are read to their end and discarded whole: counted, and the
// connection carries on. A frame at the limit is read.
func TestOversizedFrameIsDropped(t *testing.T) {
	const limit = 4096
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			srv := newServer(t, d.server)
			reg := prometheus.NewRegistry()
			c := dial(t, srv, d.proto(), client.WithMetrics(reg, "x"), client.WithReadLimit(limit))
			ctx := testutil.Context(t)
			topic := d.topics[0]
			sub, err := c.Subscribe(ctx, []string{topic})
			require.NoError(t, err)
			require.NoError(t, srv.WaitSubscribers(ctx, topic, 1))
			drainEvents(c)

			for i, size := range []int{limit + 1, 10 * limit, 300 << 10} {
				require.Equal(t, 1, srv.SendOversized(size))
				require.Eventually(t, func() bool { return dropped(t, reg, "oversized") == float64(i+1) },
					5*time.Second, time.Millisecond, "%d bytes", size)
				srv.Publish(topic, payload(d.name, topic, i+1))
				m := receive(t, sub)
				require.Equal(t, uint64(i+1), m.Seq)
				require.Contains(t, string(m.Data), fmt.Sprintf(`"n":%d`, i+1))
			}
			frames := metric(t, reg, "wsfan_client_frames_total", nil)
			require.Equal(t, 1, srv.SendOversized(limit))
			require.Eventually(t, func() bool { return metric(t, reg, "wsfan_client_frames_total", nil) == frames+1 },
				5*time.Second, time.Millisecond, "a frame at the limit is read")
			assert.Equal(t, float64(3), dropped(t, reg, "oversized"))
			requireNoEvent(t, c, client.Disconnected, 0)
			requireOpen(t, sub)
		})
	}
}

// A server error object in place of a result is an *RPCError with the
// server's code, for every call, and the connection carries on.
func TestErrorObjectWhereResultExpected(t *testing.T) {
	for _, d := range dialects[:3] {
		t.Run(d.name, func(t *testing.T) {
			srv := newServer(t, d.server)
			srv.Handle("fail", func(json.RawMessage) (any, *protocol.Error) {
				return nil, protocol.NewError(-32000, "boom", map[string]int{"x": 1})
			})
			c := dial(t, srv, d.proto())
			var out struct{ A int }
			err := c.Call(testutil.Context(t), "fail", nil, &out)
			var rpcErr *client.RPCError
			require.ErrorAs(t, err, &rpcErr)
			assert.Equal(t, -32000, rpcErr.Code)
			assert.Equal(t, "boom", rpcErr.Message)
			assert.JSONEq(t, `{"x":1}`, string(rpcErr.Data))
			assert.Contains(t, err.Error(), "fail")
		})
	}
}
