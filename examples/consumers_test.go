// Package examples_test runs the consumers in other languages against a
// real sidecar, so they keep working.
package examples_test

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/wsfan/wsfan/internal/sidecartest"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/sidecar"
	"github.com/wsfan/wsfan/pkg/thalex"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// startSidecar serves a feeding Thalex test exchange and returns the
// sidecar's address.
func startSidecar(t *testing.T) string {
	t.Helper()
	ex := exchangetest.NewServer(thalex.Name)
	t.Cleanup(ex.Close)
	ex.StartFeed(exchangetest.FeedOptions{Interval: 20 * time.Millisecond})
	served := sidecartest.Serve(t, sidecar.Config{Upstream: ex.URL(), Protocol: "thalex"})
	require.Eventually(t, served.Ready, 10*time.Second, 10*time.Millisecond)
	return served.Addr
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

// Asked for a topic the sidecar does not know, the Python example says
// why (the sidecar's 404 and its JSON body) and stops, instead of
// retrying forever.
func TestPythonSSEConsumerStopsOnARefusal(t *testing.T) {
	path, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed")
	}
	addr := startSidecar(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "python/sse_consumer.py", "http://"+addr, "no such topic").CombinedOutput()
	require.Error(t, err, "exits non-zero")
	assert.Contains(t, string(out), "refused: HTTP 404")
	assert.Contains(t, string(out), "no such topic")
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
