package okx_test

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/okx"
	"github.com/wsfan/wsfan/pkg/pool"
)

// acceptLog is a listener that records when each connection was
// accepted, as the venue counts them.
type acceptLog struct {
	net.Listener
	mu    sync.Mutex
	times []time.Time
}

func (l *acceptLog) Accept() (net.Conn, error) {
	nc, err := l.Listener.Accept()
	if err == nil {
		l.mu.Lock()
		l.times = append(l.times, time.Now())
		l.mu.Unlock()
	}
	return nc, err
}

func (l *acceptLog) accepted() []time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.times)
}

// ackingServer is a loopback OKX server that acknowledges every argument
// of a subscribe, recording when it accepted each connection.
func ackingServer(t *testing.T) (url string, log *acceptLog) {
	t.Helper()
	upgrader := websocket.Upgrader{}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := upgrader.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer ws.Close()
		for {
			_, frame, err := ws.ReadMessage()
			if err != nil {
				return
			}
			var req struct {
				ID   string            `json:"id"`
				Op   string            `json:"op"`
				Args []json.RawMessage `json:"args"`
			}
			if json.Unmarshal(frame, &req) != nil || req.Op != "subscribe" {
				continue // "ping", and anything else
			}
			for _, a := range req.Args {
				_ = ws.WriteMessage(websocket.TextMessage, []byte(`{"id":"`+req.ID+`","event":"subscribe","arg":`+string(a)+`,"connId":"a4d3ae55"}`))
			}
		}
	}))
	log = &acceptLog{Listener: srv.Listener}
	srv.Listener = log
	srv.Start()
	t.Cleanup(srv.Close)
	return "ws" + srv.URL[len("http"):] + "/ws/v5/public", log
}

// A pool.Pool of 10 connections to one OKX host opens them at OKX's pace,
// never more than 3 in any second ("Connection limit: 3 requests per
// second (based on IP)"): the server saw no 4 accepts within 1 s. Pacing
// only slows connections down, so this bound holds however loaded the
// machine is.
func TestPoolOpensConnectionsAtOKXsPace(t *testing.T) {
	url, log := ackingServer(t)
	ctx := testutil.Context(t)
	p, err := pool.Dial(ctx, url, 1, client.WithProtocol(okx.Protocol()))
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })
	topics := make([]string, 10)
	for i := range topics {
		topics[i] = fmt.Sprintf("tickers:INST-%d-USDT", i)
	}
	_, err = p.Subscribe(ctx, topics)
	require.NoError(t, err)

	accepted := log.accepted()
	require.Len(t, accepted, 10, "one connection a topic")
	slices.SortFunc(accepted, func(a, b time.Time) int { return a.Compare(b) })
	for i := 3; i < len(accepted); i++ {
		assert.GreaterOrEqual(t, accepted[i].Sub(accepted[i-3]), time.Second,
			"accepts %d to %d within one second: more than 3 a second", i-3, i)
	}
}
