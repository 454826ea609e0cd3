package client_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/pkg/client"
)

// stampTap records the receive time of each frame read, and holds the
// reader up on the first, as a slow consumer under Block would.
type stampTap struct {
	mu  sync.Mutex
	at  []time.Time
	got chan struct{}
}

func (s *stampTap) FrameRead(_ client.ConnInfo, _ []byte, at time.Time) {
	s.mu.Lock()
	s.at = append(s.at, at)
	n := len(s.at)
	s.mu.Unlock()
	if n == 1 {
		time.Sleep(20 * time.Millisecond)
	}
	if n == 3 {
		close(s.got)
	}
}

func (s *stampTap) FrameWritten(client.ConnInfo, []byte, time.Time) {}

// Frames that arrive in one read of the socket take its receive time
// (each a nanosecond after the one before, so that none shares another's),
// however long the reader takes over the first: a frame's time is when it
// was read from the socket, not when the reader came to it.
func TestReceiveTimeIsTheSocketRead(t *testing.T) {
	hold := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := (&websocket.Upgrader{}).Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer ws.Close()
		var frames []byte // three text frames, unmasked, in one write
		for _, p := range []string{`{"n":1}`, `{"n":2}`, `{"n":3}`} {
			frames = append(append(frames, 0x81, byte(len(p))), p...)
		}
		if _, err := ws.NetConn().Write(frames); err != nil {
			return
		}
		<-hold
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(hold) })
	tap := &stampTap{got: make(chan struct{})}
	c, err := client.Dial(context.Background(), "ws"+strings.TrimPrefix(srv.URL, "http"),
		client.WithProtocol(dialects[0].proto()), client.WithFrameTap(tap))
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })

	select {
	case <-tap.got:
	case <-time.After(10 * time.Second):
		t.Fatal("the three frames were not read")
	}
	tap.mu.Lock()
	defer tap.mu.Unlock()
	require.Len(t, tap.at, 3)
	assert.Equal(t, tap.at[0].Add(time.Nanosecond), tap.at[1], "read in the same call as the first: its stamp, a nanosecond after")
	assert.Equal(t, tap.at[0].Add(2*time.Nanosecond), tap.at[2])
}
