package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/pkg/deribit"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// program is the sidecar program running in a process of its own,
// started by startProgram.
type program struct {
	addr   string
	cmd    *exec.Cmd
	stderr *lockedBuffer
	exited chan error // the exit status, put back by whoever reads it
}

// startProgram runs the sidecar program (this test binary as runMain) in a
// process of its own against up, in up's dialect, on a free loopback port
// with args, and waits until it is ready (/readyz). At the end of the test
// it is sent SIGTERM and must exit 0.
func startProgram(t *testing.T, up *exchangetest.Server, args ...string) *program {
	t.Helper()
	return startProgramEnv(t, []string{"WSFAN_UPSTREAM=" + up.URL(), "WSFAN_PROTOCOL=" + up.Dialect().String()}, args...)
}

// startProgramEnv is startProgram with env in place of the upstream's
// variables (a test whose -config file names the upstream).
func startProgramEnv(t *testing.T, env []string, args ...string) *program {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	p := &program{addr: freeAddr(t), stderr: new(lockedBuffer), exited: make(chan error, 1)}
	p.cmd = exec.CommandContext(ctx, os.Args[0], append([]string{"-listen", p.addr}, args...)...)
	p.cmd.Env = append([]string{runMainEnv + "=1"}, env...)
	p.cmd.Stderr = p.stderr
	require.NoError(t, p.cmd.Start())
	go func() { p.exited <- p.cmd.Wait() }()
	t.Cleanup(func() {
		defer cancel()
		_ = p.cmd.Process.Signal(syscall.SIGTERM) // os.ErrProcessDone if it exited
		p.wait(t)
	})
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		select {
		case err := <-p.exited:
			p.exited <- err
			t.Fatalf("the program exited before serving: %v; stderr:\n%s", err, p.stderr)
		default:
		}
		if resp, err := http.Get("http://" + p.addr + "/readyz"); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the program is not ready; stderr:\n%s", p.stderr)
		}
	}
}

// wait waits (15s at most) for the program to exit and requires exit code 0.
func (p *program) wait(t *testing.T) {
	t.Helper()
	select {
	case err := <-p.exited:
		p.exited <- err
		require.NoError(t, err, "exit code; stderr:\n%s", p.stderr)
	case <-time.After(15 * time.Second):
		t.Fatalf("the program did not exit; stderr:\n%s", p.stderr)
	}
}

// bystander is a local WebSocket client subscribed to one topic, counting
// the messages published to it by publish.
type bystander struct {
	up        *exchangetest.Server
	topic     string
	published int
	got       atomic.Int64
	done      chan struct{} // closed when its connection has ended
	err       error         // why, set before done is closed
}

// newBystander dials url (the sidecar's /ws), subscribes topic and waits
// until the upstream has it. Its connection is closed at the end of the
// test.
func newBystander(t *testing.T, up *exchangetest.Server, url, topic string) *bystander {
	t.Helper()
	ws, _, err := websocket.DefaultDialer.Dial(url, nil)
	require.NoError(t, err)
	b := &bystander{up: up, topic: topic, done: make(chan struct{})}
	require.NoError(t, ws.WriteMessage(websocket.TextMessage,
		[]byte(`{"jsonrpc":"2.0","id":1,"method":"public/subscribe","params":{"channels":["`+topic+`"]}}`)))
	require.NoError(t, ws.SetReadDeadline(time.Now().Add(10*time.Second)))
	_, ack, err := ws.ReadMessage()
	require.NoError(t, err)
	require.Contains(t, string(ack), `"result":["`+topic+`"]`, "the bystander's acknowledgement")
	require.NoError(t, ws.SetReadDeadline(time.Time{}))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, up.WaitSubscribers(ctx, topic, 1))
	go func() {
		defer close(b.done)
		for {
			_, frame, err := ws.ReadMessage()
			if err != nil {
				b.err = err
				return
			}
			if bytes.Contains(frame, []byte(`"seq":`)) {
				b.got.Add(1)
			}
		}
	}()
	t.Cleanup(func() { _ = ws.Close(); <-b.done })
	return b
}

// publish publishes n messages on the bystander's topic upstream.
func (b *bystander) publish(n int) {
	for range n {
		b.up.Publish(b.topic, fmt.Appendf(nil, `{"seq":%d}`, b.published))
		b.published++
	}
}

// gotAll requires that the bystander receives every message published.
func (b *bystander) gotAll(t *testing.T) {
	t.Helper()
	require.Eventually(t, func() bool { return b.got.Load() >= int64(b.published) }, 10*time.Second, 10*time.Millisecond,
		"the bystander lost messages: got %d of %d", b.got.Load(), b.published)
	assert.EqualValues(t, b.published, b.got.Load(), "the bystander got each message once")
}

// ended waits (10s at most) for the bystander's connection to end and
// returns why.
func (b *bystander) ended(t *testing.T) error {
	t.Helper()
	select {
	case <-b.done:
		return b.err
	case <-time.After(10 * time.Second):
		t.Fatal("the bystander's connection did not end")
		return nil
	}
}

// The sidecar as deployed: the program in a process of its own, a real
// SIGTERM. A call in flight is answered (by the upstream within the
// drain, else with an error saying the sidecar is shutting down) before
// the close frame, a bystander subscribed to a topic gets every message
// published before the signal and then its close frame, and the process
// exits 0.
func TestProgramDrainsOnSIGTERM(t *testing.T) {
	up := exchangetest.NewServer(deribit.Name)
	t.Cleanup(up.Close)
	release := make(chan struct{})
	defer close(release)
	up.Handle("public/never", func(json.RawMessage) (any, *protocol.Error) {
		<-release
		return "too late", nil
	})
	p := startProgram(t, up, "-drain-timeout", "2s")

	b := newBystander(t, up, "ws://"+p.addr+"/ws", "ticker.BTC-PERPETUAL.100ms")
	b.publish(50)

	caller, _, err := websocket.DefaultDialer.Dial("ws://"+p.addr+"/ws", nil)
	require.NoError(t, err)
	defer caller.Close()
	require.NoError(t, caller.WriteMessage(websocket.TextMessage, []byte(`{"jsonrpc":"2.0","id":7,"method":"public/never"}`)))
	require.Eventually(t, func() bool { return up.CountReceived("public/never") == 1 }, 10*time.Second, 5*time.Millisecond)

	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))

	require.NoError(t, caller.SetReadDeadline(time.Now().Add(10*time.Second)))
	_, answer, err := caller.ReadMessage()
	require.NoError(t, err, "the call in flight is answered")
	assert.Contains(t, string(answer), `"id":7`)
	assert.Contains(t, string(answer), "shutting down")
	_, _, err = caller.ReadMessage()
	var ce *websocket.CloseError
	require.ErrorAs(t, err, &ce, "then the close frame")
	assert.Equal(t, websocket.CloseGoingAway, ce.Code)

	require.ErrorAs(t, b.ended(t), &ce, "the bystander's close frame")
	assert.EqualValues(t, b.published, b.got.Load(), "the bystander lost nothing")
	p.wait(t)
}
