package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/thalex"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// A line typed is a frame sent, a frame received a line printed.
func TestSendsLinesPrintsFrames(t *testing.T) {
	srv := exchangetest.NewServer(thalex.Name)
	defer srv.Close()
	srv.StartFeed(exchangetest.FeedOptions{Interval: 10 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	in := strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"public/subscribe","params":{"channels":["ticker.BTC-PERPETUAL.raw"]}}` + "\n")
	var out bytes.Buffer
	require.NoError(t, run(ctx, []string{"-n", "2", srv.URL()}, in, &out))
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 2)
	assert.Equal(t, `{"id":1,"result":["ticker.BTC-PERPETUAL.raw"]}`, lines[0])
	assert.True(t, strings.HasPrefix(lines[1], `{"channel_name":"ticker.BTC-PERPETUAL.raw","notification":`), lines[1])
}

// A refused handshake says why, with the server's answer.
func TestRefusedHandshakeSaysWhy(t *testing.T) {
	srv := exchangetest.NewServer(thalex.Name, exchangetest.WithBearerToken("t0ken"))
	defer srv.Close()
	err := run(context.Background(), []string{srv.URL()}, strings.NewReader(""), &bytes.Buffer{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "401")
}

// A close frame is printed with its code and reason, not swallowed.
func TestCloseFrameIsPrinted(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := (&websocket.Upgrader{}).Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer ws.Close()
		_ = ws.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(4008, "slow consumer"))
		_, _, _ = ws.ReadMessage() // the close answer
	}))
	defer srv.Close()
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, run(ctx, []string{"ws" + strings.TrimPrefix(srv.URL, "http")}, strings.NewReader(""), &out))
	assert.Equal(t, "closed by the server: 4008 slow consumer\n", out.String())
}
