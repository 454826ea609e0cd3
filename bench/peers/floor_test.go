package peers

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/pkg/exchangetest"
)

// floorServer is the plainest fan-out there is, the floor a fan-out
// server's added latency is stated against (BenchmarkHopPeers
// impl=floor): one gorilla connection subscribed to the test exchange ex,
// and one loop that, for every frame it reads from it, writes that frame,
// prepared once (websocket.PreparedMessage), to every client in turn.
// It answers each client frame with one reply (the subscribe), keeps no
// state, and has no queue, no overflow policy and no per-client writer:
// what it costs is the kernel's reads and writes and gorilla's framing.
func floorServer(b *testing.B, ex *exchangetest.Server) *server {
	b.Helper()
	up, resp, err := websocket.DefaultDialer.Dial(ex.URL(), nil)
	require.NoError(b, err)
	_ = resp.Body.Close()
	require.NoError(b, up.WriteMessage(websocket.TextMessage, []byte(thalexSubscribe)))
	_, _, err = up.ReadMessage() // the subscribe's answer
	require.NoError(b, err)

	f := &floor{}
	upgrader := websocket.Upgrader{}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := upgrader.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		if _, _, err := ws.ReadMessage(); err != nil { // the subscribe
			_ = ws.Close()
			return
		}
		if !f.add(ws) {
			_ = ws.Close()
			return
		}
		for { // control frames and the close
			if _, _, err := ws.ReadMessage(); err != nil {
				f.remove(ws)
				return
			}
		}
	}))
	done := make(chan struct{})
	go func() { // the fan-out loop
		defer close(done)
		for {
			_, frame, err := up.ReadMessage()
			if err != nil {
				return
			}
			pm, err := websocket.NewPreparedMessage(websocket.TextMessage, frame)
			if err != nil {
				return
			}
			f.mu.Lock()
			for _, ws := range f.clients {
				_ = ws.WritePreparedMessage(pm)
			}
			f.mu.Unlock()
		}
	}()
	return &server{
		url:       "ws" + strings.TrimPrefix(hs.URL, "http"),
		subscribe: []string{thalexSubscribe},
		close: func() {
			_ = up.Close()
			<-done
			hs.CloseClientConnections()
			hs.Close()
		},
	}
}

// floor is floorServer's clients. mu is held by the fan-out loop for a
// whole message, so a client joins or leaves between messages.
type floor struct {
	mu      sync.Mutex
	clients []*websocket.Conn
}

// add answers ws's subscribe and makes it a client, as one step for the
// fan-out loop: no message falls between the answer and the first one
// ws gets, and the loop never writes to ws at the same time.
func (f *floor) add(ws *websocket.Conn) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := ws.WriteMessage(websocket.TextMessage, []byte(`{"id":1,"result":["`+topic+`"]}`)); err != nil {
		return false
	}
	f.clients = append(f.clients, ws)
	return true
}

func (f *floor) remove(ws *websocket.Conn) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, c := range f.clients {
		if c == ws {
			f.clients = append(f.clients[:i], f.clients[i+1:]...)
			return
		}
	}
}
