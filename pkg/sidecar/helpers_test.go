package sidecar_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/sidecartest"
	"github.com/wsfan/wsfan/pkg/deribit"
	"github.com/wsfan/wsfan/pkg/ethereal"
	"github.com/wsfan/wsfan/pkg/ethereum"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/sidecar"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// dialectCase is what a test needs to speak one dialect locally.
type dialectCase struct {
	name      string
	d         exchangetest.Dialect
	topic     string
	subMethod string // as exchangetest.CountReceived counts it
	unsMethod string
	subscribe func(id int, topic string) string
	unsub     func(id int, topic, localID string) string
	frame     func(topic, localID string, data string) string
	rpc       bool
}

var dialects = []dialectCase{
	{
		name: "thalex", d: thalex.Name, topic: "ticker.BTC-PERPETUAL.raw",
		subMethod: "public/subscribe", unsMethod: "unsubscribe", rpc: true,
		subscribe: func(id int, topic string) string {
			return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"public/subscribe","params":{"channels":[%q]}}`, id, topic)
		},
		unsub: func(id int, topic, _ string) string {
			return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"unsubscribe","params":{"channels":[%q]}}`, id, topic)
		},
		frame: func(topic, _ string, data string) string {
			return fmt.Sprintf(`{"channel_name":%q,"notification":%s}`, topic, data)
		},
	},
	{
		name: "deribit", d: deribit.Name, topic: "book.BTC-PERPETUAL.100ms",
		subMethod: "public/subscribe", unsMethod: "public/unsubscribe", rpc: true,
		subscribe: func(id int, topic string) string {
			return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"public/subscribe","params":{"channels":[%q]}}`, id, topic)
		},
		unsub: func(id int, topic, _ string) string {
			return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"public/unsubscribe","params":{"channels":[%q]}}`, id, topic)
		},
		frame: func(topic, _ string, data string) string {
			return fmt.Sprintf(`{"jsonrpc":"2.0","method":"subscription","params":{"channel":%q,"data":%s}}`, topic, data)
		},
	},
	{
		name: "ethereum", d: ethereum.Name, topic: "newHeads",
		subMethod: "eth_subscribe", unsMethod: "eth_unsubscribe", rpc: true,
		subscribe: func(id int, topic string) string {
			return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"eth_subscribe","params":[%q]}`, id, topic)
		},
		unsub: func(id int, _, localID string) string {
			return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"eth_unsubscribe","params":[%q]}`, id, localID)
		},
		frame: func(_, localID string, data string) string {
			return fmt.Sprintf(`{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":%q,"result":%s}}`, localID, data)
		},
	},
	{
		name: "ethereal", d: ethereal.Name, topic: "L2Book:BTCUSD",
		subMethod: "subscribe", unsMethod: "unsubscribe",
		subscribe: func(_ int, topic string) string {
			typ, sym, _ := strings.Cut(topic, ":")
			return fmt.Sprintf(`{"event":"subscribe","data":{"type":%q,"symbol":%q}}`, typ, sym)
		},
		unsub: func(_ int, topic, _ string) string {
			typ, sym, _ := strings.Cut(topic, ":")
			return fmt.Sprintf(`{"event":"unsubscribe","data":{"type":%q,"symbol":%q}}`, typ, sym)
		},
		frame: func(_, _ string, data string) string { return "" }, // set per test: the whole frame
	},
}

// rig is an exchangetest upstream and a sidecar in front of it.
type rig struct {
	up  *exchangetest.Server
	sc  *sidecar.Server
	url string // http://127.0.0.1:PORT
}

// newRig starts an upstream speaking d (with opts) and a sidecar serving
// it on a random loopback port; both stop at the end of the test.
func newRig(t *testing.T, d exchangetest.Dialect, tune func(*sidecar.Config), opts ...exchangetest.Option) *rig {
	t.Helper()
	up := exchangetest.NewServer(d, opts...)
	t.Cleanup(up.Close)
	cfg := sidecar.Config{
		Upstream:       up.URL(),
		Protocol:       d.String(),
		Grace:          50 * time.Millisecond,
		WriteTimeout:   2 * time.Second,
		RequestTimeout: 5 * time.Second,
		DrainTimeout:   2 * time.Second,
	}
	if tune != nil {
		tune(&cfg)
	}
	served := sidecartest.Serve(t, cfg)
	r := &rig{up: up, sc: served.Server, url: "http://" + served.Addr}
	waitFor(t, "upstream connected", r.sc.Ready)
	return r
}

func (r *rig) wsURL() string { return "ws" + strings.TrimPrefix(r.url, "http") + "/ws" }

// dial connects a local client, closed at the end of the test.
func (r *rig) dial(t *testing.T) *websocket.Conn {
	t.Helper()
	ws, resp, err := websocket.DefaultDialer.Dial(r.wsURL(), nil)
	require.NoError(t, err)
	_ = resp.Body.Close()
	t.Cleanup(func() { _ = ws.Close() })
	return ws
}

// waitClients waits until the sidecar has n clients each holding topics
// topics (attached: notifications published from now on reach them).
func (r *rig) waitClients(t *testing.T, n, topics int) {
	t.Helper()
	waitFor(t, fmt.Sprintf("%d clients with %d topics", n, topics), func() bool {
		st := r.sc.Status()
		have := 0
		for _, c := range st.Clients {
			if c.Topics == topics {
				have++
			}
		}
		return have == n
	})
}

// client returns the status of the local client ws. It goes by address:
// the sidecar numbers a session after its handshake answer, so a client
// dialed first may get the higher id.
func (r *rig) client(t *testing.T, ws *websocket.Conn) sidecar.ClientStatus {
	t.Helper()
	for _, c := range r.sc.Status().Clients {
		if c.Remote == ws.LocalAddr().String() {
			return c
		}
	}
	t.Fatalf("no client at %s", ws.LocalAddr())
	return sidecar.ClientStatus{}
}

// waitFor polls cond for up to 10s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return resp.StatusCode, b.String()
}

type sidecarConfig = sidecar.Config

const time10s = 10 * time.Second

// dialWith connects a local client with query appended to the URL and
// header sent with the handshake, closed at the end of the test.
func (r *rig) dialWith(t *testing.T, query string, header http.Header) *websocket.Conn {
	t.Helper()
	ws, resp, err := websocket.DefaultDialer.Dial(r.wsURL()+query, header)
	require.NoError(t, err)
	_ = resp.Body.Close()
	t.Cleanup(func() { _ = ws.Close() })
	return ws
}
