package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/sidecartest"
	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/record"
	"github.com/wsfan/wsfan/pkg/sidecar"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// localFrames subscribes a local client of the sidecar at addr to
// topics and returns a function reading n notification frames.
func localFrames(t *testing.T, addr string) func(n int) []string {
	t.Helper()
	ws, _, err := websocket.DefaultDialer.Dial("ws://"+addr+"/ws", nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ws.Close() })
	testutil.Send(t, ws, `{"jsonrpc":"2.0","id":1,"method":"public/subscribe","params":{"channels":["ticker.BTC-PERPETUAL.raw","ticker.ETH-PERPETUAL.raw"]}}`)
	testutil.Recv(t, ws) // the acknowledgement
	return func(n int) []string {
		var out []string
		_ = ws.SetReadDeadline(time.Now().Add(20 * time.Second))
		for len(out) < n {
			_, data, err := ws.ReadMessage()
			require.NoError(t, err)
			out = append(out, string(data))
		}
		return out
	}
}

// A sidecar started with Record keeps what its upstream sent; replayed
// at -speed max to a sidecar in front of the replay, a program behind it
// reads the frames a program behind the recording sidecar read, byte for
// byte, each topic's in order.
func TestSidecarRecordingReplaysBehindASidecar(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "rec")
	up := exchangetest.NewServer(thalex.Name)
	defer up.Close()
	live := sidecartest.Serve(t, sidecar.Config{Upstream: up.URL(), Protocol: "thalex", Record: dir, Grace: 50 * time.Millisecond})
	require.Eventually(t, live.Ready, 10*time.Second, 5*time.Millisecond)
	read := localFrames(t, live.Addr)
	require.NoError(t, up.WaitSubscribers(testutil.Context(t), "ticker.ETH-PERPETUAL.raw", 1))
	for i := range 50 {
		up.Publish(topics[i%2], fmt.Appendf(nil, `{"n":%d}`, i))
	}
	want := read(50)
	st := live.Status().Recording
	require.NotNil(t, st)
	assert.Equal(t, dir, st.Dir)
	live.Stop()
	live.Close()

	loaded, err := load(dir, record.Window{})
	require.NoError(t, err)
	srv := exchangetest.NewServer(thalex.Name, exchangetest.WithTopics(loaded.topics...))
	defer srv.Close()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, _ = loaded.play(testutil.Context(t), srv, 0, 250*time.Millisecond)
	}()
	defer wg.Wait()
	replayed := sidecartest.Serve(t, sidecar.Config{Upstream: srv.URL(), Protocol: "thalex", Grace: 50 * time.Millisecond})
	require.Eventually(t, replayed.Ready, 10*time.Second, 5*time.Millisecond)
	got := localFrames(t, replayed.Addr)(50)
	assert.Equal(t, byTopic(want), byTopic(got), "each topic's frames, in order (the sidecar orders topics apart)")
}

// byTopic groups Thalex notification frames by their channel_name.
func byTopic(frames []string) map[string][]string {
	out := map[string][]string{}
	for _, f := range frames {
		var n struct {
			Channel string `json:"channel_name"`
		}
		_ = json.Unmarshal([]byte(f), &n)
		out[n.Channel] = append(out[n.Channel], f)
	}
	return out
}
