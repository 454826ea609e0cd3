package peers

import (
	"encoding/binary"
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
// and one loop that writes each frame it reads from it to every client
// in turn, in one write(2) a client, with the frames read meanwhile: one
// frame a write while it keeps up, all that waited when it fell behind,
// as any fan-out's writers batch. Writing a frame at a time, it could not
// keep up on a 2-core VM whose processors the clients' readers share, and
// its queue grew without bound (p50 2.4-29 ms, p99 to 400 ms: issue 47).
// It answers each client frame with one reply (the subscribe), keeps no
// state, and has no overflow policy and no per-client writer: what it
// costs is the kernel's reads and writes and the frames' headers.
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
		// The fan-out loop writes to the socket itself: gorilla must not
		// answer a ping or a close from here meanwhile.
		ws.SetPingHandler(func(string) error { return nil })
		ws.SetCloseHandler(func(int, string) error { return nil })
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
	frames := make(chan []byte, 4096)
	go func() { // the upstream's reader
		defer close(frames)
		for {
			_, frame, err := up.ReadMessage()
			if err != nil {
				return
			}
			frames <- frame
		}
	}()
	done := make(chan struct{})
	go func() { // the fan-out loop, the clients' only writer once added
		defer close(done)
		var batch []byte
		for frame := range frames {
			batch = appendTextFrame(batch[:0], frame)
			for len(frames) > 0 { // read meanwhile: in the same writes
				batch = appendTextFrame(batch, <-frames)
			}
			f.mu.Lock()
			for _, ws := range f.clients {
				_, _ = ws.UnderlyingConn().Write(batch)
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
// whole batch, so a client joins or leaves between batches.
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

// appendTextFrame appends payload as one unmasked WebSocket text frame,
// as a server sends it (RFC 6455, section 5.2).
func appendTextFrame(dst, payload []byte) []byte {
	switch n := len(payload); {
	case n < 126:
		dst = append(dst, 0x81, byte(n))
	case n < 1<<16:
		dst = append(dst, 0x81, 126, byte(n>>8), byte(n))
	default:
		dst = binary.BigEndian.AppendUint64(append(dst, 0x81, 127), uint64(n))
	}
	return append(dst, payload...)
}
