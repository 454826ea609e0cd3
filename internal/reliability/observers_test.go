package reliability_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"
)

// holes follows one program's numbered messages, topic by topic: a
// number that skips is a hole, marked or not by what the program was
// told before or with the message after it.
type holes struct {
	mu       sync.Mutex
	last     map[string]int
	marked   map[string]bool // a mark came before the topic's next message
	count    int
	unmarked int
}

func newHoles() *holes { return &holes{last: map[string]int{}, marked: map[string]bool{}} }

// mark records a mark for topic's next message (a gap notice, an SSE gap
// event).
func (h *holes) mark(topic string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.marked[topic] = true
}

// observe records message n of topic; flagged says the message itself
// carries a mark.
func (h *holes) observe(topic string, n int, flagged bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	prev, seen := h.last[topic]
	if seen && n > prev+1 {
		h.count++
		if !flagged && !h.marked[topic] {
			h.unmarked++
		}
	}
	h.marked[topic] = false
	h.last[topic] = max(prev, n)
}

func (h *holes) counts() (count, unmarked int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.count, h.unmarked
}

// watchWS is a plain WebSocket program behind the sidecar that asked for
// gap notices (?notify=gaps): it subscribes topics with Deribit's frame
// and follows what it reads until ctx ends.
func watchWS(t *testing.T, ctx context.Context, addr string, topics []string) (*holes, <-chan struct{}) {
	t.Helper()
	ws, resp, err := websocket.DefaultDialer.DialContext(ctx, "ws://"+addr+"/ws?notify=gaps", nil)
	require.NoError(t, err)
	_ = resp.Body.Close()
	channels, _ := json.Marshal(topics)
	require.NoError(t, ws.WriteMessage(websocket.TextMessage,
		[]byte(`{"jsonrpc":"2.0","id":1,"method":"public/subscribe","params":{"channels":`+string(channels)+`}}`)))
	h, done := newHoles(), make(chan struct{})
	stop := context.AfterFunc(ctx, func() { _ = ws.Close() })
	go func() {
		defer close(done)
		defer stop()
		for {
			_, data, err := ws.ReadMessage()
			if err != nil {
				return
			}
			var f struct {
				Method string
				Params struct {
					Channel string
					Data    struct{ N int }
				}
			}
			if json.Unmarshal(data, &f) != nil {
				continue
			}
			switch f.Method {
			case "wsfan/gap":
				h.mark(f.Params.Channel)
			case "subscription":
				h.observe(f.Params.Channel, f.Params.Data.N, false)
			}
		}
	}()
	return h, done
}

// watchSSE is a Server-Sent Events stream of topics from the sidecar,
// followed until ctx ends.
func watchSSE(t *testing.T, ctx context.Context, addr string, topics []string) (*holes, <-chan struct{}) {
	t.Helper()
	q := url.Values{"topic": topics}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/v1/stream?"+q.Encode(), nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	h, done := newHoles(), make(chan struct{})
	go func() {
		defer close(done)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok {
				continue
			}
			var ev struct {
				Topic       string
				Data        struct{ N int }
				Reconnected bool
				Gap         bool
			}
			if json.Unmarshal([]byte(data), &ev) != nil {
				continue
			}
			if ev.Gap {
				h.mark(ev.Topic)
				continue
			}
			h.observe(ev.Topic, ev.Data.N, ev.Reconnected)
		}
	}()
	return h, done
}
