package client_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/pkg/client"
)

// A server that upgrades and then reads nothing: its socket fills, and
// the requests stop going out. Each call still ends with its ctx (the
// caller never waits on the socket: the writer goroutine does), not after
// the 10 s write timeout.
func TestCallToAStalledPeerEndsWithItsContext(t *testing.T) {
	hold := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := (&websocket.Upgrader{}).Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer ws.Close()
		<-hold
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(hold) })
	c, err := client.Dial(context.Background(), "ws"+strings.TrimPrefix(srv.URL, "http"), client.WithProtocol(dialects[0].proto()))
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })

	params := json.RawMessage(`"` + strings.Repeat("x", 512<<10) + `"`)
	for i := range 24 { // 12 MiB: more than loopback's socket buffers hold
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		start := time.Now()
		_, err := c.CallRaw(ctx, "echo", params)
		cancel()
		elapsed := time.Since(start)
		require.Error(t, err, "call %d: the peer answers nothing", i)
		require.Less(t, elapsed, 2*time.Second, "call %d waited on the socket: %v", i, err)
	}
}
