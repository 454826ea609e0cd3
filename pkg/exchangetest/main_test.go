package exchangetest_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/gorilla/websocket"
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
	must(t, err)
	_ = resp.Body.Close()
	t.Cleanup(func() { _ = ws.Close() })
	return ws
}

func send(t *testing.T, ws *websocket.Conn, frame string) {
	t.Helper()
	must(t, ws.WriteMessage(websocket.TextMessage, []byte(frame)))
}

// recv reads one message, failing after 5s.
func recv(t *testing.T, ws *websocket.Conn) string {
	t.Helper()
	must(t, ws.SetReadDeadline(time.Now().Add(5*time.Second)))
	_, data, err := ws.ReadMessage()
	must(t, err)
	return string(data)
}

// recvJSON reads one message and decodes it into a generic value.
func recvJSON(t *testing.T, ws *websocket.Conn) map[string]any {
	t.Helper()
	var v map[string]any
	must(t, json.Unmarshal([]byte(recv(t, ws)), &v))
	return v
}

// noMessage checks that nothing arrives within d.
func noMessage(t *testing.T, ws *websocket.Conn, d time.Duration) {
	t.Helper()
	must(t, ws.SetReadDeadline(time.Now().Add(d)))
	if _, data, err := ws.ReadMessage(); err == nil {
		t.Fatalf("unexpected message %s", data)
	}
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// must fails the test on err. (testify's require needs a go.sum entry the
// module does not have yet, so the helpers are local.)
func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// eq fails the test unless got == want.
func eq[T comparable](t *testing.T, want, got T) {
	t.Helper()
	if got != want {
		t.Fatalf("got  %v\nwant %v", got, want)
	}
}
