package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/pkg/deribit"
	"github.com/wsfan/wsfan/pkg/exchangetest"
)

// The sidecar as deployed: the program in a process of its own, a real
// SIGTERM. A call in flight is answered (by the upstream within the
// drain, else with an error saying the sidecar is shutting down) before
// the close frame, a bystander subscribed to a topic gets every message
// published before the signal and then its close frame, and the process
// exits 0.
func TestProgramDrainsOnSIGTERM(t *testing.T) {
	up := exchangetest.NewServer(deribit.Name)
	defer up.Close()
	release := make(chan struct{})
	defer close(release)
	up.Handle("public/never", func(json.RawMessage) (any, *exchangetest.RPCError) {
		<-release
		return "too late", nil
	})
	addr := freeAddr(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-listen", addr, "-drain-timeout", "2s")
	cmd.Env = []string{runMainEnv + "=1", "WSFAN_UPSTREAM=" + up.URL(), "WSFAN_PROTOCOL=deribit"}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	require.Eventually(t, func() bool {
		resp, err := http.Get("http://" + addr + "/readyz")
		if err != nil {
			return false
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, 20*time.Second, 20*time.Millisecond, "the program serves")

	topic := "ticker.BTC-PERPETUAL.100ms"
	bystander, _, err := websocket.DefaultDialer.Dial("ws://"+addr+"/ws", nil)
	require.NoError(t, err)
	defer bystander.Close()
	require.NoError(t, bystander.WriteMessage(websocket.TextMessage,
		[]byte(`{"jsonrpc":"2.0","id":1,"method":"public/subscribe","params":{"channels":["`+topic+`"]}}`)))
	_, _, err = bystander.ReadMessage() // the acknowledgement
	require.NoError(t, err)
	require.NoError(t, up.WaitSubscribers(ctx, topic, 1))
	const published = 50
	for i := range published {
		up.Publish(topic, fmt.Appendf(nil, `{"n":%d}`, i))
	}

	caller, _, err := websocket.DefaultDialer.Dial("ws://"+addr+"/ws", nil)
	require.NoError(t, err)
	defer caller.Close()
	require.NoError(t, caller.WriteMessage(websocket.TextMessage, []byte(`{"jsonrpc":"2.0","id":7,"method":"public/never"}`)))
	require.Eventually(t, func() bool { return up.CountReceived("public/never") == 1 }, 10*time.Second, 5*time.Millisecond)

	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))

	require.NoError(t, caller.SetReadDeadline(time.Now().Add(10*time.Second)))
	_, answer, err := caller.ReadMessage()
	require.NoError(t, err, "the call in flight is answered")
	assert.Contains(t, string(answer), `"id":7`)
	assert.Contains(t, string(answer), "shutting down")
	_, _, err = caller.ReadMessage()
	var ce *websocket.CloseError
	require.ErrorAs(t, err, &ce, "then the close frame")
	assert.Equal(t, websocket.CloseGoingAway, ce.Code)

	require.NoError(t, bystander.SetReadDeadline(time.Now().Add(10*time.Second)))
	got := 0
	for {
		_, _, err := bystander.ReadMessage()
		if err != nil {
			require.ErrorAs(t, err, &ce, "the bystander's close frame")
			break
		}
		got++
	}
	assert.Equal(t, published, got, "the bystander lost nothing")
	select {
	case err := <-exited:
		require.NoError(t, err, "exit code; stderr:\n%s", stderr.String())
	case <-time.After(15 * time.Second):
		t.Fatal("the program did not exit")
	}
}
