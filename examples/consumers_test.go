// Package examples_test runs the consumers in other languages against a
// real sidecar, so they keep working.
package examples_test

import (
	"context"
	"errors"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/sidecar"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// startSidecar serves a feeding Thalex test exchange and returns the
// sidecar's address.
func startSidecar(t *testing.T) string {
	t.Helper()
	ex := exchangetest.NewServer(exchangetest.Thalex)
	t.Cleanup(ex.Close)
	ex.StartFeed(exchangetest.FeedOptions{Interval: 20 * time.Millisecond})
	sc, err := sidecar.New(sidecar.Config{Upstream: ex.URL(), Protocol: "thalex"})
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- sc.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Serve: %v", err)
		}
	})
	require.Eventually(t, sc.Ready, 10*time.Second, 10*time.Millisecond)
	return ln.Addr().String()
}

// consume runs an example until it has printed three messages of topic.
func consume(t *testing.T, name string, args ...string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("%s is not installed", name)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = append(cmd.Environ(), "WSFAN_COUNT=3")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	return string(out)
}

const topic = "ticker.BTC-PERPETUAL.raw"

// The Python example reads the sidecar's SSE stream with the standard
// library.
func TestPythonSSEConsumer(t *testing.T) {
	addr := startSidecar(t)
	out := consume(t, "python3", "python/sse_consumer.py", "http://"+addr, topic)
	assert.Equal(t, 3, strings.Count(out, topic+" {\"best_bid_price\""), out)
}

// The Node example speaks Thalex's own protocol to the sidecar over
// WebSocket: built into Node 22, behind a flag in Node 20.
func TestNodeWebSocketConsumer(t *testing.T) {
	addr := startSidecar(t)
	args := []string{"node/ws_consumer.mjs", "ws://" + addr + "/ws", topic}
	if exec.Command("node", "-e", "process.exit(typeof WebSocket === 'function' ? 0 : 1)").Run() != nil {
		args = append([]string{"--experimental-websocket"}, args...)
	}
	out := consume(t, "node", args...)
	assert.Contains(t, out, "subscribed: "+topic)
	assert.Equal(t, 3, strings.Count(out, topic+" {\"best_bid_price\""), out)
}
