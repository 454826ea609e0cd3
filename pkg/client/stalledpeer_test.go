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

// A request whose caller gave up before the writer took it is never
// written: an order whose caller timed out behind a stalled socket must
// not reach the exchange once the socket drains. The server reads nothing
// until released, then records every method it reads.
func TestCallNotWrittenAfterItsCallerGaveUp(t *testing.T) {
	release := make(chan struct{})
	methods := make(chan string, 64)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := (&websocket.Upgrader{}).Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer ws.Close()
		<-release
		for {
			var req struct{ Method string }
			if ws.ReadJSON(&req) != nil {
				return
			}
			methods <- req.Method
		}
	}))
	t.Cleanup(srv.Close)
	c, err := client.Dial(context.Background(), "ws"+strings.TrimPrefix(srv.URL, "http"),
		client.WithProtocol(dialects[0].proto()), client.WithPing(0, 0), client.WithWriteTimeout(5*time.Second))
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })

	// Enough to fill loopback's socket buffers: the writer blocks in its
	// write while the next requests queue behind it.
	big := json.RawMessage(`"` + strings.Repeat("x", 16<<20) + `"`)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, _ = c.CallRaw(ctx, "big", big)
	}()
	for !client.WriterTookAll(c) {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond) // and is blocked writing it
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	_, err = c.CallRaw(ctx, "private/buy", nil)
	cancel()
	require.ErrorIs(t, err, context.DeadlineExceeded)

	close(release)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, _ = c.CallRaw(ctx, "marker", nil)
	}()
	var seen []string
	// The server decodes the 16 MB call first: seconds under the race
	// detector on a loaded machine.
	deadline := time.After(30 * time.Second)
	for len(seen) == 0 || seen[len(seen)-1] != "marker" {
		select {
		case m := <-methods:
			seen = append(seen, m)
		case <-deadline:
			t.Fatalf("the marker call never arrived; read %v", seen)
		}
	}
	require.NotContains(t, seen, "private/buy", "a call whose caller gave up was written")
}
