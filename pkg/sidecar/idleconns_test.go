package sidecar_test

import (
	"errors"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/pkg/sidecar"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// openIdle opens n connections to addr that never become clients: the
// even ones connect and send nothing, the odd ones send one request and
// then sit on the keep-alive connection. They are closed at the end of
// the test.
func openIdle(t *testing.T, addr string, n int) []net.Conn {
	t.Helper()
	conns := make([]net.Conn, 0, n)
	t.Cleanup(func() {
		for _, c := range conns {
			_ = c.Close()
		}
	})
	for i := range n {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		require.NoError(t, err, "connection %d", i)
		conns = append(conns, c)
		if i%2 == 1 {
			_, err := c.Write([]byte("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"))
			require.NoError(t, err)
		}
	}
	return conns
}

// waitClosed waits until the server has closed every one of conns (their
// reads end with EOF or a reset, past any answer), or deadline; it
// returns how many are still open.
func waitClosed(conns []net.Conn, deadline time.Time) int {
	open := 0
	buf := make([]byte, 4096)
	for _, c := range conns {
		_ = c.SetReadDeadline(deadline)
		for {
			_, err := c.Read(buf)
			if err == nil {
				continue
			}
			if errors.Is(err, os.ErrDeadlineExceeded) {
				open++
			}
			break
		}
	}
	return open
}

// Connections that are not clients do not keep clients out: with far more
// idle connections than the listener holds (-max-clients plus 128), some
// silent since they connected, some idle after a request, a WebSocket
// client still connects within seconds, and every idle one is closed.
func TestIdleConnectionsDoNotKeepClientsOut(t *testing.T) {
	const idle = 300 // the listener holds 8+128
	r := newRig(t, thalex.Name, func(c *sidecar.Config) { c.MaxClients = 8 })
	conns := openIdle(t, strings.TrimPrefix(r.url, "http://"), idle)

	d := websocket.Dialer{HandshakeTimeout: 5 * time.Second}
	start := time.Now()
	ws, resp, err := d.Dial(r.wsURL(), nil)
	require.NoError(t, err, "a client kept out by %d idle connections", idle)
	_ = resp.Body.Close()
	t.Cleanup(func() { _ = ws.Close() })
	t.Logf("connected after %v", time.Since(start))
	require.NoError(t, ws.WriteMessage(websocket.TextMessage, []byte(`{"jsonrpc":"2.0","id":1,"method":"public/subscribe","params":{"channels":["a.b"]}}`)))
	_ = ws.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, ack, err := ws.ReadMessage()
	require.NoError(t, err)
	assert.Contains(t, string(ack), `"id":1`)

	assert.Zero(t, waitClosed(conns, time.Now().Add(20*time.Second)), "idle connections left open")
	_, metrics := httpGet(t, r.url+"/metrics")
	assert.Positive(t, sampleOf(t, metrics, "wsfan_sidecar_idle_connections_reaped_total"))
	assert.Positive(t, sampleOf(t, metrics, "wsfan_sidecar_open_connections"), "the client and this request")
}

// Closing idle connections never cuts a client: a WebSocket client and an
// SSE stream opened first still get a message published after the
// listener has been full of idle connections for several idle timeouts,
// and idle ones were closed to make room meanwhile.
func TestIdleReapingSparesClients(t *testing.T) {
	r := newRig(t, thalex.Name, func(c *sidecar.Config) { c.MaxClients = 4; c.IdleConnTimeout = time.Second })
	ws := r.dial(t)
	require.NoError(t, ws.WriteMessage(websocket.TextMessage, []byte(`{"jsonrpc":"2.0","id":1,"method":"public/subscribe","params":{"channels":["a.b"]}}`)))
	_ = ws.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, _, err := ws.ReadMessage()
	require.NoError(t, err)
	st := openSSE(t, r.url+"/v1/stream?topic=a.b", "")
	st.next(t)
	r.waitClients(t, 2, 1)

	openIdle(t, strings.TrimPrefix(r.url, "http://"), 200) // the listener holds 4+128
	time.Sleep(3 * time.Second)                            // idle timeouts and reaping rounds go by
	_, metrics := httpGet(t, r.url+"/metrics")
	assert.Positive(t, sampleOf(t, metrics, "wsfan_sidecar_idle_connections_reaped_total"))

	r.waitClients(t, 2, 1)
	r.up.Publish("a.b", []byte(`{"n":1}`))
	_, msg, err := ws.ReadMessage()
	require.NoError(t, err, "the WebSocket client was cut")
	assert.Contains(t, string(msg), `{"n":1}`)
	assert.Equal(t, `{"topic":"a.b","data":{"n":1}}`, st.next(t).data, "the SSE stream")

	code, _ := httpGet(t, r.url+"/v1/status")
	assert.Equal(t, http.StatusOK, code, "requests are served")
}
