package peers

import (
	"encoding/binary"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/pkg/exchangetest"
)

// floorServer is the plainest fan-out there is, the floor a fan-out
// server's added latency is stated against (BenchmarkHopPeers
// impl=floor): one connection subscribed to the test exchange ex, and one
// goroutine that reads its socket and writes what it read, the
// exchange's own frames as they came (a server's frames are unmasked,
// so they are valid on every client's connection), to every client: one
// read(2), then one write(2) a client, the writes shared out over the
// processors (floor.write), nothing else. What one read brings (one
// frame while it keeps up, all that arrived meanwhile when it fell
// behind) goes in one write a client, so it batches as any fan-out's
// writers do, without a queue. It answers each client frame with one
// reply (the subscribe), keeps no state, parses nothing but the frames'
// lengths, and has no queue bound, no overflow policy and no per-client
// writer: what it costs is the kernel's reads and writes.
//
// Its shape is the sidecar's (issue 47): on the 2-core VM, one goroutine
// writing to the 100 clients in turn left the other core to the clients'
// process, which then woke for every frame, and p50 and p99 were above
// the sidecar's (475 against 375 µs, 1.7 against 1.25 ms in the quiet
// rounds); with the writes shared out, 350 µs and 1.0-1.25 ms. Before
// this round it was a reader goroutine handing each frame, copied, to
// one writer loop: a wake-up a frame besides.
func floorServer(b *testing.B, ex *exchangetest.Server) *server {
	b.Helper()
	up, resp, err := websocket.DefaultDialer.Dial(ex.URL(), nil)
	require.NoError(b, err)
	_ = resp.Body.Close()
	require.NoError(b, up.WriteMessage(websocket.TextMessage, []byte(thalexSubscribe)))
	_, _, err = up.ReadMessage() // the subscribe's answer; nothing is published before it
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
	done := make(chan struct{})
	go func() { // the fan-out loop: the upstream's reader, and the clients' only writer once added
		defer close(done)
		f.run(up.NetConn())
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
// whole write round, so a client joins or leaves between rounds.
type floor struct {
	mu      sync.Mutex
	clients []net.Conn
}

// run reads up until it fails and writes the whole frames of each read
// to every client; a frame's part that a read cut off waits for the
// next read.
func (f *floor) run(up net.Conn) {
	buf := make([]byte, 64<<10)
	n := 0 // bytes in buf
	for {
		if n == len(buf) { // one frame larger than buf
			buf = append(buf, make([]byte, len(buf))...)
		}
		m, err := up.Read(buf[n:])
		if err != nil {
			return
		}
		n += m
		whole := wholeFrames(buf[:n])
		if whole == 0 {
			continue
		}
		f.mu.Lock()
		f.write(buf[:whole])
		f.mu.Unlock()
		n = copy(buf, buf[whole:n])
	}
}

// wholeFrames is the length of the whole WebSocket frames b begins with
// (RFC 6455, section 5.2).
func wholeFrames(b []byte) int {
	end := 0
	for {
		rest := b[end:]
		if len(rest) < 2 {
			return end
		}
		size, head := uint64(rest[1]&0x7f), 2
		switch size {
		case 126:
			if len(rest) < 4 {
				return end
			}
			size, head = uint64(binary.BigEndian.Uint16(rest[2:])), 4
		case 127:
			if len(rest) < 10 {
				return end
			}
			size, head = binary.BigEndian.Uint64(rest[2:]), 10
		}
		if rest[1]&0x80 != 0 { // masked: a server sends none, but count its key
			head += 4
		}
		if uint64(len(rest)-head) < size {
			return end
		}
		end += head + int(size)
	}
}

// add answers ws's subscribe and makes it a client, as one step for the
// fan-out loop: no frame falls between the answer and the first one ws
// gets, and the loop never writes to ws at the same time.
func (f *floor) add(ws *websocket.Conn) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := ws.WriteMessage(websocket.TextMessage, []byte(`{"id":1,"result":["`+topic+`"]}`)); err != nil {
		return false
	}
	f.clients = append(f.clients, ws.NetConn())
	return true
}

func (f *floor) remove(ws *websocket.Conn) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, c := range f.clients {
		if c == ws.NetConn() {
			f.clients = append(f.clients[:i], f.clients[i+1:]...)
			return
		}
	}
}

// write writes frames to every client, the writes shared out between
// the calling goroutine and a helper a processor more, each taking the
// next chunk of clients until none is left (the sidecar's offerShare, in
// its plainest form); it returns when every write is made. Called by the
// fan-out loop with mu held.
func (f *floor) write(frames []byte) {
	n := runtime.GOMAXPROCS(0)
	chunk := int64(max(4, len(f.clients)/(8*n)))
	var next, left atomic.Int64
	left.Store(int64(len(f.clients)))
	done := make(chan struct{})
	take := func() {
		for {
			start := next.Add(chunk) - chunk
			if start >= int64(len(f.clients)) {
				return
			}
			part := f.clients[start:min(start+chunk, int64(len(f.clients)))]
			for _, c := range part {
				_, _ = c.Write(frames)
			}
			if left.Add(-int64(len(part))) == 0 {
				close(done)
			}
		}
	}
	for range n - 1 {
		go take()
	}
	take()
	<-done
}
