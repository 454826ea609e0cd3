package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/pkg/deribit"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/sidecar"
)

// status reads the program's /v1/status.
func (p *program) status(t *testing.T) sidecar.Status {
	t.Helper()
	resp, err := http.Get("http://" + p.addr + "/v1/status")
	require.NoError(t, err)
	defer resp.Body.Close()
	var st sidecar.Status
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&st))
	return st
}

// offered lists the topics a status offers.
func offered(st sidecar.Status) []string {
	var out []string
	for _, o := range st.Offered {
		out = append(out, o.Topic)
	}
	return out
}

// waitLog waits (10s at most) until the program has logged want.
func (p *program) waitLog(t *testing.T, want string) {
	t.Helper()
	require.Eventually(t, func() bool { return strings.Contains(p.stderr.String(), want) }, 10*time.Second, 10*time.Millisecond,
		"the program did not log %q; stderr:\n%s", want, p.stderr)
}

// The program as deployed, a real SIGHUP: the file's new topics, limit
// and log level apply, the bystander keeps its connection and loses no
// message, one line says what changed; a file changing a setting that
// needs a restart is refused whole, logged, and the process runs on.
func TestProgramReloadsOnSIGHUP(t *testing.T) {
	const btc, eth = "ticker.BTC-PERPETUAL.100ms", "ticker.ETH-PERPETUAL.100ms"
	up := exchangetest.NewServer(deribit.Name)
	t.Cleanup(up.Close)
	file := filepath.Join(t.TempDir(), "sidecar.yaml")
	write := func(s string) { require.NoError(t, os.WriteFile(file, []byte(s), 0o600)) }
	write("topics: [" + btc + "]\n")
	p := startProgram(t, up, "-config", file)
	b := newBystander(t, up, "ws://"+p.addr+"/ws", btc)
	b.publish(20)
	v0 := p.status(t).Config.Version

	write("topics: [" + btc + ", " + eth + "]\nmax_topics_per_client: 5\nlog_level: debug\n")
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGHUP))
	p.waitLog(t, "config reloaded")
	b.publish(20)
	st := p.status(t)
	assert.NotEqual(t, v0, st.Config.Version)
	assert.Equal(t, []string{btc, eth}, offered(st))
	line := p.stderr.String()[strings.Index(p.stderr.String(), "config reloaded"):]
	line = line[:strings.IndexByte(line, '\n')]
	for _, want := range []string{"SIGHUP", "topics", "max_topics_per_client", "log_level", st.Config.Version} {
		assert.Contains(t, line, want)
	}

	write("topics: [" + btc + "]\nqueue_bytes: 1MiB\n")
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGHUP))
	p.waitLog(t, "config reload refused")
	assert.Contains(t, p.stderr.String(), "queue_bytes changed: needs a restart")
	after := p.status(t)
	assert.Equal(t, st.Config.Version, after.Config.Version)
	assert.Equal(t, []string{btc, eth}, offered(after), "the refused file's topics were applied")
	assert.Equal(t, map[string]uint64{"applied": 1, "refused": 1, "invalid": 0}, after.Config.Reloads)

	b.publish(20)
	b.gotAll(t)
}

// -config-watch follows a Kubernetes ConfigMap volume: the file is a
// symlink through ..data, which the kubelet swaps to a new directory.
// The swap is noticed without a signal; a change that leaves the content
// as it was is not a reload.
func TestProgramConfigWatchFollowsSymlinkSwap(t *testing.T) {
	const btc, eth = "ticker.BTC-PERPETUAL.100ms", "ticker.ETH-PERPETUAL.100ms"
	up := exchangetest.NewServer(deribit.Name)
	t.Cleanup(up.Close)
	dir := t.TempDir()
	version := func(name, content string) {
		require.NoError(t, os.Mkdir(filepath.Join(dir, name), 0o700))
		require.NoError(t, os.WriteFile(filepath.Join(dir, name, "sidecar.yaml"), []byte(content), 0o600))
		tmp := filepath.Join(dir, "..data_tmp")
		require.NoError(t, os.Symlink(name, tmp))
		require.NoError(t, os.Rename(tmp, filepath.Join(dir, "..data"))) // atomic, as the kubelet does it
	}
	version("v1", "topics: ["+btc+"]\n")
	file := filepath.Join(dir, "sidecar.yaml")
	require.NoError(t, os.Symlink(filepath.Join("..data", "sidecar.yaml"), file))
	p := startProgram(t, up, "-config", file, "-config-watch")
	v0 := p.status(t).Config.Version

	version("v2", "topics: ["+btc+"]\n") // the same content: no reload
	time.Sleep(3 * watchInterval)        // read at least twice
	assert.NotContains(t, p.stderr.String(), "config reloaded")
	version("v3", "topics: ["+btc+", "+eth+"]\n")
	p.waitLog(t, "config reloaded")
	st := p.status(t)
	assert.NotEqual(t, v0, st.Config.Version)
	assert.Equal(t, []string{btc, eth}, offered(st))
	assert.Contains(t, p.stderr.String(), "config file changed")
	assert.Equal(t, uint64(1), st.Config.Reloads["applied"], "reloads")
	assert.Equal(t, 1, strings.Count(p.stderr.String(), "config reloaded"))
}

// -config-watch without a file to watch is refused at start.
func TestConfigWatchNeedsAFile(t *testing.T) {
	_, stderr, code := runMain(t, "-demo", "-listen", "127.0.0.1:0", "-config-watch")
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "-config-watch needs a config file")
}

// The program, a real SIGHUP, a file naming the upstream: a new endpoint
// moves the upstream make before break (the bystander loses nothing and
// keeps its connection; the old server is left); with cancel-on-disconnect
// held (a program made it: blocked_methods lets it through) a move back
// is refused and logged, and the rest of the file applies.
func TestProgramMovesTheUpstreamOnSIGHUP(t *testing.T) {
	const btc, eth = "ticker.BTC-PERPETUAL.100ms", "ticker.ETH-PERPETUAL.100ms"
	const cod = "private/enable_cancel_on_disconnect"
	old, next := exchangetest.NewServer(deribit.Name), exchangetest.NewServer(deribit.Name)
	t.Cleanup(old.Close)
	t.Cleanup(next.Close)
	next.Handle(cod, func(json.RawMessage) (any, *protocol.Error) { return "ok", nil })
	file := filepath.Join(t.TempDir(), "sidecar.yaml")
	write := func(upstream, topics string) {
		s := "protocol: deribit\nblocked_methods: [private/logout]\nupstream: " + upstream + "\ntopics: [" + topics + "]\n"
		require.NoError(t, os.WriteFile(file, []byte(s), 0o600))
	}
	write(old.URL(), btc)
	p := startProgramEnv(t, nil, "-config", file)
	b := newBystander(t, old, "ws://"+p.addr+"/ws", btc)
	b.publish(20)
	b.gotAll(t)

	write(next.URL(), btc)
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGHUP))
	p.waitLog(t, "config reloaded")
	assert.Contains(t, p.stderr.String(), "endpoints replaced; moved to the new first one")
	require.Eventually(t, func() bool { return old.Connections() == 0 }, 10*time.Second, 10*time.Millisecond)
	st := p.status(t)
	assert.Equal(t, next.URL(), st.Upstream.Endpoint)
	assert.Equal(t, 1, next.Subscribers(btc))
	b.up = next
	b.publish(20)
	b.gotAll(t)

	trader, _, err := websocket.DefaultDialer.Dial("ws://"+p.addr+"/ws", nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = trader.Close() })
	require.NoError(t, trader.WriteMessage(websocket.TextMessage, []byte(`{"jsonrpc":"2.0","id":1,"method":"`+cod+`","params":{}}`)))
	_, answer, err := trader.ReadMessage()
	require.NoError(t, err)
	require.Contains(t, string(answer), `"result":"ok"`)
	write(old.URL(), btc+", "+eth)
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGHUP))
	p.waitLog(t, "config reload kept the upstream endpoints")
	require.Eventually(t, func() bool { return strings.Count(p.stderr.String(), "config reloaded") == 2 }, 10*time.Second, 10*time.Millisecond)
	assert.Contains(t, p.stderr.String(), "a session setting holds on the connection")
	after := p.status(t)
	assert.Equal(t, next.URL(), after.Upstream.Endpoint)
	assert.Equal(t, []string{btc, eth}, offered(after))
	assert.Zero(t, old.Connections())
	b.publish(20)
	b.gotAll(t)
	assert.NoError(t, b.err, "the bystander's connection")
}
