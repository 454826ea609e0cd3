package sidecar_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/deribit"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/sidecar"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// Calls other than subscribe are forwarded upstream under the upstream
// client's ids and answered with the local client's own id.
func TestRPCForwardedWithIDsRemapped(t *testing.T) {
	for _, dc := range dialects {
		if !dc.rpc {
			continue
		}
		t.Run(dc.name, func(t *testing.T) {
			r := newRig(t, dc.d, nil)
			r.up.Handle("public/instruments", func(params json.RawMessage) (any, *protocol.Error) {
				return json.RawMessage(`{"echo":` + string(params) + `}`), nil
			})
			r.up.Handle("private/buy", func(json.RawMessage) (any, *protocol.Error) {
				return nil, protocol.NewError(10009, "not enough funds", map[string]int{"need": 5})
			})
			envelope := `{"id":%s,`
			if dc.d != thalex.Name {
				envelope = `{"jsonrpc":"2.0","id":%s,`
			}
			a, b := r.dial(t), r.dial(t)
			// The same id from two clients, and a string id.
			testutil.Send(t, a, `{"jsonrpc":"2.0","id":7,"method":"public/instruments","params":{"kind":"a"}}`)
			testutil.Send(t, b, `{"jsonrpc":"2.0","id":7,"method":"public/instruments","params":{"kind":"b"}}`)
			require.EqualValues(t, fmt.Sprintf(envelope, "7")+`"result":{"echo":{"kind":"a"}}}`, testutil.Recv(t, a))
			require.EqualValues(t, fmt.Sprintf(envelope, "7")+`"result":{"echo":{"kind":"b"}}}`, testutil.Recv(t, b))
			testutil.Send(t, a, `{"jsonrpc":"2.0","id":"x-1","method":"private/buy","params":{}}`)
			require.EqualValues(t, fmt.Sprintf(envelope, `"x-1"`)+`"error":{"code":10009,"message":"not enough funds","data":{"need":5}}}`, testutil.Recv(t, a))
			testutil.Send(t, a, `{"jsonrpc":"2.0","id":9,"method":"no/such","params":{}}`)
			require.EqualValues(t, fmt.Sprintf(envelope, "9")+`"error":{"code":-32601,"message":"method not found"}}`, testutil.Recv(t, a))

			// Upstream saw its own ids, never the local ones twice.
			ids := map[string]bool{}
			for _, m := range r.up.Received() {
				var req struct {
					ID     json.RawMessage `json:"id"`
					Method string          `json:"method"`
				}
				if json.Unmarshal(m.Data, &req) == nil && req.Method == "public/instruments" {
					if ids[string(req.ID)] {
						t.Fatalf("upstream id %s used twice", req.ID)
					}
					ids[string(req.ID)] = true
				}
			}
			require.EqualValues(t, 2, len(ids))
		})
	}
}

// A login would authenticate the shared upstream for every local client,
// so it is refused with an explanation.
func TestBlockedMethod(t *testing.T) {
	r := newRig(t, thalex.Name, nil)
	a := r.dial(t)
	testutil.Send(t, a, `{"jsonrpc":"2.0","id":1,"method":"public/login","params":{"key":"k","secret":"s"}}`)
	got := testutil.Recv(t, a)
	if !strings.HasPrefix(got, `{"id":1,"error":{"code":-32001,"message":"public/login is not forwarded`) {
		t.Fatalf("got %s", got)
	}
	require.EqualValues(t, 0, r.up.CountReceived("public/login"))
}

// A Thalex batch array is answered with an array, subscribes and calls in
// order.
func TestBatch(t *testing.T) {
	r := newRig(t, thalex.Name, nil)
	r.up.Handle("public/time", func(json.RawMessage) (any, *protocol.Error) { return 42, nil })
	a := r.dial(t)
	testutil.Send(t, a, `[{"jsonrpc":"2.0","id":1,"method":"public/subscribe","params":{"channels":["a.b"]}},{"jsonrpc":"2.0","id":2,"method":"public/time"}]`)
	require.EqualValues(t, `[{"id":1,"result":["a.b"]},{"id":2,"result":42}]`, testutil.Recv(t, a))
	r.waitClients(t, 1, 1)
	r.up.Publish("a.b", []byte(`1`))
	require.EqualValues(t, `{"channel_name":"a.b","notification":1}`, testutil.Recv(t, a))
}

// Deribit heartbeats belong to the sidecar's own upstream connection; a
// local client's are answered locally.
func TestDeribitHeartbeatIsLocal(t *testing.T) {
	r := newRig(t, deribit.Name, nil)
	a := r.dial(t)
	testutil.Send(t, a, `{"jsonrpc":"2.0","id":1,"method":"public/set_heartbeat","params":{"interval":0.05}}`)
	require.EqualValues(t, `{"jsonrpc":"2.0","id":1,"result":"ok"}`, testutil.Recv(t, a))
	require.EqualValues(t, `{"jsonrpc":"2.0","method":"heartbeat","params":{"type":"test_request"}}`, testutil.Recv(t, a))
	testutil.Send(t, a, `{"jsonrpc":"2.0","id":2,"method":"public/disable_heartbeat","params":{}}`)
	for {
		if got := testutil.Recv(t, a); got == `{"jsonrpc":"2.0","id":2,"result":"ok"}` {
			break
		}
	}
	require.EqualValues(t, 0, r.up.CountReceived("public/disable_heartbeat"))
}

// The sidecar paces what all its local clients send through the shared
// upstream connection: a burst of calls from three clients, over the
// exchange's own limit, waits for its turn instead of being refused.
// Without -rate-limit the same burst is refused in part.
func TestRateLimitSharedByLocalClients(t *testing.T) {
	const clients, calls = 3, 15
	for _, limit := range []float64{0, 80} {
		t.Run(fmt.Sprintf("limit=%v", limit), func(t *testing.T) {
			r := newRig(t, thalex.Name, func(c *sidecar.Config) {
				c.RateLimit, c.RateBurst = limit, 5
				if limit == 0 {
					c.RateBurst = 0
				}
			}, exchangetest.WithRateLimit(100, 10))
			r.up.Handle("public/instruments", func(json.RawMessage) (any, *protocol.Error) {
				return []string{"BTC-PERPETUAL"}, nil
			})
			conns := make([]*websocket.Conn, clients)
			for i := range conns {
				conns[i] = r.dial(t)
			}
			for _, ws := range conns {
				for id := range calls {
					testutil.Send(t, ws, fmt.Sprintf(`{"id":%d,"method":"public/instruments","params":{}}`, id))
				}
			}
			var refused int
			for _, ws := range conns {
				for range calls {
					res := testutil.RecvJSON(t, ws)
					if e, ok := res["error"].(map[string]any); ok {
						require.EqualValues(t, 4, e["code"], "Thalex's throttle error")
						refused++
					}
				}
			}
			if limit == 0 {
				assert.Positive(t, refused, "the burst is over the exchange's limit")
			} else {
				assert.Zero(t, refused, "paced by the sidecar, nothing is refused")
			}
		})
	}
}
