package exchangetest_test

import (
	"context"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/wsfan/wsfan/pkg/exchangetest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// newServer starts a server closed at the end of the test.
func newServer(t *testing.T, d exchangetest.Dialect, opts ...exchangetest.Option) *exchangetest.Server {
	t.Helper()
	srv := exchangetest.NewServer(d, opts...)
	t.Cleanup(srv.Close)
	return srv
}

// dial connects a plain gorilla client, closed at the end of the test.
func dial(t *testing.T, srv *exchangetest.Server) *websocket.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ws, resp, err := websocket.DefaultDialer.DialContext(ctx, srv.URL(), nil)
	require.NoError(t, err)
	_ = resp.Body.Close()
	t.Cleanup(func() { _ = ws.Close() })
	return ws
}

// noMessage checks that nothing arrives within d.
func noMessage(t *testing.T, ws *websocket.Conn, d time.Duration) {
	t.Helper()
	require.NoError(t, ws.SetReadDeadline(time.Now().Add(d)))
	if _, data, err := ws.ReadMessage(); err == nil {
		t.Fatalf("unexpected message %s", data)
	}
}
