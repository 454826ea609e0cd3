package client_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// Keys in each place providers put one, unique enough that finding one
// anywhere is a leak.
const (
	leakPassword = "pass0word9Q"
	leakPathKey  = "a1b2c3d4e5f60718293a4b5c6d7e8f90"
	leakQueryKey = "k3y5ecret99Z"
)

func keyedURL(addr string) string {
	return "ws://user:" + leakPassword + "@" + addr + "/v3/" + leakPathKey + "?apikey=" + leakQueryKey
}

func assertNoKey(t *testing.T, where, shown string) {
	t.Helper()
	for _, s := range []string{leakPassword, leakPathKey, leakQueryKey} {
		assert.NotContains(t, shown, s, "%s shows a key", where)
	}
}

// logText is every logged message with its fields, as a log shipper
// would see them.
func logText(logs *observer.ObservedLogs) string {
	var b strings.Builder
	for _, e := range logs.All() {
		b.WriteString(e.Message)
		for k, v := range e.ContextMap() {
			fmt.Fprintf(&b, " %s=%v", k, v)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// A dial that fails: the error and the logs name the endpoint (host,
// path shape) without the userinfo, the key in the path or the query
// value; so does the reconnecting client's event.
func TestDialErrorsAndLogsRedactTheURL(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close()) // nothing listens there now

	core, logs := observer.New(zap.DebugLevel)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err = client.Dial(ctx, keyedURL(addr), client.WithProtocol(thalex.Protocol(thalex.WithNotices(false))), client.WithLogger(zap.New(core)))
	require.Error(t, err)
	assertNoKey(t, "the dial error", err.Error())
	assert.Contains(t, err.Error(), addr+"/v3/REDACTED?apikey=REDACTED")

	// Retrying in the background: the warning and the Disconnected event.
	c, err := client.Dial(ctx, keyedURL(addr), client.WithProtocol(thalex.Protocol(thalex.WithNotices(false))), client.WithLogger(zap.New(core)),
		client.WithRetryOnFailedConnect())
	require.NoError(t, err)
	select {
	case ev := <-c.Events():
		if ev.Err != nil {
			assertNoKey(t, "an event", ev.Err.Error())
		}
	case <-ctx.Done():
	}
	require.NoError(t, c.Close())
	text := logText(logs)
	require.NotEmpty(t, text)
	assertNoKey(t, "the logs", text)

	// A URL gorilla cannot parse: its own error quotes the URL.
	_, err = client.Dial(ctx, "ws://127.0.0.1:1/v3/"+leakPathKey+"/%zz?apikey="+leakQueryKey, client.WithProtocol(thalex.Protocol(thalex.WithNotices(false))))
	require.Error(t, err)
	assertNoKey(t, "a malformed URL's error", err.Error())

	// A URL without its scheme: shown, but for its secrets, with what
	// is wanted, before any dial.
	for raw, shown := range map[string]string{
		"127.0.0.1:1": `"127.0.0.1:1"`,
		"thalex.com/v3/" + leakPathKey + "?apikey=" + leakQueryKey: `"thalex.com/v3/REDACTED?apikey=REDACTED"`,
		"https://thalex.com/ws/api/v2":                             `"https://thalex.com/ws/api/v2"`,
	} {
		_, err = client.Dial(ctx, raw, client.WithProtocol(thalex.Protocol()))
		require.Error(t, err)
		assertNoKey(t, "a scheme-less URL's error", err.Error())
		assert.Contains(t, err.Error(), shown)
		assert.Contains(t, err.Error(), "want a ws:// or wss:// URL")
	}
}

// A connected client logs its URL redacted.
func TestConnectedLogRedactsTheURL(t *testing.T) {
	srv := newServer(t, thalex.Name) // serves any path
	core, logs := observer.New(zap.DebugLevel)
	c, err := client.Dial(testutil.Context(t), keyedURL(srv.Addr()), client.WithProtocol(thalex.Protocol(thalex.WithNotices(false))), client.WithLogger(zap.New(core)))
	require.NoError(t, err)
	require.NoError(t, c.Close())
	text := logText(logs)
	require.Contains(t, text, srv.Addr()+"/v3/REDACTED?apikey=REDACTED")
	assertNoKey(t, "the logs", text)
}

// user:password@ in the URL reaches the server as Basic authentication
// (gorilla refuses userinfo in a ws:// URL); an Authorization header set
// with WithHeader wins.
func TestUserinfoBecomesBasicAuth(t *testing.T) {
	got := make(chan string, 2)
	upgrader := websocket.Upgrader{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Get("Authorization")
		ws, err := upgrader.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		for { // until the client closes
			if _, _, err := ws.ReadMessage(); err != nil {
				_ = ws.Close()
				return
			}
		}
	}))
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()

	c, err := client.Dial(ctx, keyedURL(addr), client.WithProtocol(thalex.Protocol(thalex.WithNotices(false))))
	require.NoError(t, err)
	assert.Equal(t, "Basic dXNlcjpwYXNzMHdvcmQ5UQ==", <-got) // user:pass0word9Q
	require.NoError(t, c.Close())

	c, err = client.Dial(ctx, keyedURL(addr), client.WithProtocol(thalex.Protocol(thalex.WithNotices(false))),
		client.WithHeader(http.Header{"Authorization": {"Bearer token"}}))
	require.NoError(t, err)
	assert.Equal(t, "Bearer token", <-got)
	require.NoError(t, c.Close())
}
