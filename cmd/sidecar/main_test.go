package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"go.uber.org/goleak"

	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/sidecar"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
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
	up := exchangetest.NewServer(exchangetest.Deribit)
	defer up.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	env := map[string]string{"WSFAN_UPSTREAM": up.URL(), "WSFAN_PROTOCOL": "deribit"}
	done := make(chan error, 1)
	addr := freeAddr(t)
	go func() {
		done <- run(ctx, []string{"-listen", addr, "-drain-timeout", "5s"}, func(k string) string { return env[k] }, io.Discard, io.Discard)
	}()
	var ws *websocket.Conn
	deadline := time.Now().Add(10 * time.Second)
	for {
		var err error
		ws, _, err = websocket.DefaultDialer.Dial("ws://"+addr+"/ws", nil)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	defer ws.Close()
	must(t, ws.WriteMessage(websocket.TextMessage, []byte(`{"jsonrpc":"2.0","id":1,"method":"public/subscribe","params":{"channels":["ticker.BTC-PERPETUAL.100ms"]}}`)))
	must(t, ws.SetReadDeadline(time.Now().Add(10*time.Second)))
	if _, ack, err := ws.ReadMessage(); err != nil || !strings.Contains(string(ack), `"result":["ticker.BTC-PERPETUAL.100ms"]`) {
		t.Fatalf("ack %s, %v", ack, err)
	}
	cancel()
	_, _, err := ws.ReadMessage()
	var ce *websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != websocket.CloseGoingAway || ce.Text != "sidecar shutting down" {
		t.Fatalf("want a going-away close frame, got %v", err)
	}
	_ = ws.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("run did not return")
	}
}

// Flags override WSFAN_* variables, which override the config file.
func TestOptionsPrecedence(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sidecar.yaml")
	must(t, os.WriteFile(path, []byte("upstream: ws://file\nprotocol: deribit\ngrace: 2s\noverflow: drop\nlisten: 127.0.0.1:9000\nlast_message_cache: true\n"), 0o600))
	env := map[string]string{"WSFAN_CONFIG": path, "WSFAN_LISTEN": "127.0.0.1:9001", "WSFAN_QUEUE_BYTES": "1024"}
	o, err := parseOptions([]string{"-listen", "127.0.0.1:9002"}, func(k string) string { return env[k] }, io.Discard)
	must(t, err)
	c := o.cfg
	if c.Upstream != "ws://file" || c.Protocol != "deribit" || c.Grace != 2*time.Second ||
		c.Overflow != sidecar.OverflowDrop || c.Listen != "127.0.0.1:9002" || c.QueueBytes != 1024 || !c.LastMessageCache {
		t.Fatalf("unexpected config %+v", c)
	}
	if _, err := parseOptions([]string{"-overflow", "sometimes"}, noEnv, io.Discard); err == nil {
		t.Fatal("a bad -overflow was accepted")
	}
	if err := run(context.Background(), []string{"-listen", "0.0.0.0:0", "-upstream", "ws://x"}, noEnv, io.Discard, io.Discard); err == nil ||
		!strings.Contains(err.Error(), "requires a token") {
		t.Fatalf("a public listener without a token: %v", err)
	}
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
	must(t, err)
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
