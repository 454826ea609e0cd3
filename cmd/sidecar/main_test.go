package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/wsfan/wsfan/pkg/deribit"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// TestMain runs main itself when a test starts this binary as the
// program (runMain), so the exit codes tested are the real ones.
func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		main()
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

const runMainEnv = "SIDECAR_TEST_RUN_MAIN"

// runMain runs the sidecar program (this test binary's main) with args and
// no WSFAN_* variables, and returns its stdout, stderr and exit code.
func runMain(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = []string{runMainEnv + "=1"}
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return out.String(), errOut.String(), exit.ExitCode()
	}
	require.NoError(t, err)
	return out.String(), errOut.String(), 0
}

func noEnv(string) string { return "" }

// The demo serves the SSE stream its instructions print, and exits cleanly
// when interrupted.
func TestDemoServes(t *testing.T) {
	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		err := run(ctx, []string{"-demo", "-listen", "127.0.0.1:0"}, noEnv, pw, io.Discard)
		pw.Close()
		done <- err
	}()
	curl := regexp.MustCompile(`curl -N '([^']+)'`)
	var streamURL string
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		if m := curl.FindStringSubmatch(sc.Text()); m != nil {
			streamURL = m[1]
			break
		}
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	if streamURL == "" {
		t.Fatal("the demo printed no curl line")
	}
	if !strings.Contains(streamURL, "topic=ticker.BTC-PERPETUAL.raw") {
		t.Fatalf("unexpected stream URL %s", streamURL)
	}
	rctx, rcancel := context.WithTimeout(ctx, 10*time.Second)
	defer rcancel()
	req, _ := http.NewRequestWithContext(rctx, http.MethodGet, streamURL, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(resp.Body)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("stream ended before an event: %v", err)
		}
		if strings.HasPrefix(line, "data: {") {
			break
		}
	}
	cancel() // SIGINT
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the demo did not exit")
	}
	_ = resp.Body.Close()
}

// SIGTERM (the context ending) drains: a local client gets a "going away"
// close frame and run returns nil.
func TestRunDrainsOnTerminate(t *testing.T) {
	up := exchangetest.NewServer(deribit.Name)
	defer up.Close()
	r := startSidecar(t, map[string]string{"WSFAN_UPSTREAM": up.URL(), "WSFAN_PROTOCOL": "deribit"}, nil, "-drain-timeout", "5s")
	ws, _, err := websocket.DefaultDialer.Dial("ws://"+r.addr+"/ws", nil)
	require.NoError(t, err)
	defer ws.Close()
	require.NoError(t, ws.WriteMessage(websocket.TextMessage, []byte(`{"jsonrpc":"2.0","id":1,"method":"public/subscribe","params":{"channels":["ticker.BTC-PERPETUAL.100ms"]}}`)))
	require.NoError(t, ws.SetReadDeadline(time.Now().Add(10*time.Second)))
	_, ack, err := ws.ReadMessage()
	require.NoError(t, err)
	require.Contains(t, string(ack), `"result":["ticker.BTC-PERPETUAL.100ms"]`)

	r.cancel() // SIGTERM
	_, _, err = ws.ReadMessage()
	var ce *websocket.CloseError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, websocket.CloseGoingAway, ce.Code)
	assert.Equal(t, "sidecar shutting down", ce.Text)
	_ = ws.Close()
	r.stop(t)
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}

// running is a sidecar program started by startSidecar.
type running struct {
	addr   string
	cancel context.CancelFunc
	done   chan error
}

// startSidecar runs the program in this process on a free loopback port
// with args and the WSFAN_* variables of env, and waits until /healthz
// answers. The program is stopped (and must exit cleanly) at the end of
// the test. A nil stderr discards the logs.
func startSidecar(t *testing.T, env map[string]string, stderr io.Writer, args ...string) *running {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{addr: freeAddr(t), cancel: cancel, done: make(chan error, 1)}
	args = append([]string{"-listen", r.addr}, args...)
	if stderr == nil {
		stderr = io.Discard
	}
	go func() { r.done <- run(ctx, args, func(k string) string { return env[k] }, io.Discard, stderr) }()
	t.Cleanup(func() { r.stop(t) })
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		select {
		case err := <-r.done:
			r.done <- err
			t.Fatalf("the sidecar exited before serving: %v", err)
		default:
		}
		if resp, err := http.Get("http://" + r.addr + "/healthz"); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return r
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("the sidecar did not serve /healthz")
		}
	}
}

// stop interrupts the program and checks that it exits cleanly.
func (r *running) stop(t *testing.T) {
	t.Helper()
	r.cancel()
	select {
	case err := <-r.done:
		r.done <- err
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("the sidecar did not exit")
	}
}

// On SIGTERM, a call in flight that the upstream answers within the drain
// gets its answer, and one it does not answer gets an error saying the
// sidecar is shutting down, both before the close frame: no call
// vanishes without an answer.
func TestTerminateAnswersCallsInFlight(t *testing.T) {
	up := exchangetest.NewServer(deribit.Name)
	defer up.Close()
	release := make(chan struct{})
	defer close(release)
	up.Handle("public/quick", func(json.RawMessage) (any, *protocol.Error) {
		time.Sleep(300 * time.Millisecond)
		return "done", nil
	})
	up.Handle("public/never", func(json.RawMessage) (any, *protocol.Error) {
		<-release
		return "too late", nil
	})
	r := startSidecar(t, map[string]string{"WSFAN_UPSTREAM": up.URL(), "WSFAN_PROTOCOL": "deribit"}, nil, "-drain-timeout", "2s")
	ws, _, err := websocket.DefaultDialer.Dial("ws://"+r.addr+"/ws", nil)
	require.NoError(t, err)
	defer ws.Close()
	// The test exchange runs a handler on its connection's reader: quick
	// must reach it before never, which holds the reader.
	require.NoError(t, ws.WriteMessage(websocket.TextMessage, []byte(`{"jsonrpc":"2.0","id":2,"method":"public/quick"}`)))
	require.Eventually(t, func() bool { return up.CountReceived("public/quick") == 1 }, 10*time.Second, time.Millisecond)
	require.NoError(t, ws.WriteMessage(websocket.TextMessage, []byte(`{"jsonrpc":"2.0","id":3,"method":"public/never"}`)))
	require.Eventually(t, func() bool { return up.CountReceived("public/never") == 1 }, 10*time.Second, 5*time.Millisecond)

	r.cancel() // SIGTERM
	require.NoError(t, ws.SetReadDeadline(time.Now().Add(10*time.Second)))
	answers := map[int]string{}
	for {
		_, frame, err := ws.ReadMessage()
		if err != nil {
			var ce *websocket.CloseError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, websocket.CloseGoingAway, ce.Code)
			break
		}
		var resp struct {
			ID     int             `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		require.NoError(t, json.Unmarshal(frame, &resp))
		answers[resp.ID] = string(resp.Result)
		if resp.Error != nil {
			answers[resp.ID] = resp.Error.Message
		}
	}
	assert.Equal(t, `"done"`, answers[2], "answered within the drain")
	assert.Contains(t, answers[3], "shutting down", "not answered in time: an error, before the close frame")
	_ = ws.Close()
	r.stop(t)
}
