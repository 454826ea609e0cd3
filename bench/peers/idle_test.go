package peers

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/benchkit"
	"github.com/wsfan/wsfan/internal/rawws"
)

// idleClients is how many idle clients BenchmarkIdleClientPeers holds.
const idleClients = 10_000

// The environment of the client-holding child process (holdClients).
const (
	envHoldAddr   = "WSFAN_PEERS_HOLD_ADDR"   // host:port
	envHoldPath   = "WSFAN_PEERS_HOLD_PATH"   // the WebSocket path
	envHoldFrames = "WSFAN_PEERS_HOLD_FRAMES" // JSON array of the frames each client sends
	envHoldCount  = "WSFAN_PEERS_HOLD_COUNT"  // how many clients
)

// TestMain runs the test binary as one of the benchmarks' children when
// its environment asks: the client holder or the hop clients.
func TestMain(m *testing.M) {
	child := map[string]func() error{envHoldAddr: holdClients, envHopVia: runHopClients, envCrowdBase: runCrowd}
	for env, run := range child {
		if os.Getenv(env) != "" {
			if err := run(); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			os.Exit(0)
		}
	}
	os.Exit(m.Run())
}

// holdClients is the child: it opens the clients by hand (internal/rawws:
// a socket each, nothing read), says "ready" on stdout, and holds them
// until its stdin closes.
func holdClients() error {
	n, err := strconv.Atoi(os.Getenv(envHoldCount))
	if err != nil {
		return err
	}
	var frames []string
	if err := json.Unmarshal([]byte(os.Getenv(envHoldFrames)), &frames); err != nil {
		return err
	}
	raw := make([][]byte, len(frames))
	for i, f := range frames {
		raw[i] = []byte(f)
	}
	for range n {
		c, err := rawws.Dial(os.Getenv(envHoldAddr), os.Getenv(envHoldPath), raw...)
		if err != nil {
			return err
		}
		defer c.Close()
	}
	fmt.Println("ready")
	_, _ = io.Copy(io.Discard, os.Stdin)
	return nil
}

// holder is a running client-holding child.
type holder struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
}

// startHolder starts a child holding n clients of srv, and waits until
// they are connected.
func startHolder(b *testing.B, srv *server, n int) *holder {
	b.Helper()
	addr, path, _ := strings.Cut(strings.TrimPrefix(srv.url, "ws://"), "/")
	frames, _ := json.Marshal(srv.subscribe)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envHoldAddr+"="+addr, envHoldPath+"=/"+path,
		envHoldFrames+"="+string(frames), envHoldCount+"="+strconv.Itoa(n))
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	require.NoError(b, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(b, err)
	require.NoError(b, cmd.Start())
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(b, err, "the client holder")
	require.Equal(b, "ready\n", line)
	return &holder{cmd: cmd, stdin: stdin}
}

// stop closes the child's clients and waits for it.
func (h *holder) stop() {
	_ = h.stdin.Close()
	_ = h.cmd.Wait()
}

// BenchmarkIdleClientPeers measures what an idle client subscribed to one
// topic costs each server: this process's heap and stacks after GC, a
// client, with 10,000 clients held by a child process (so the open-file
// limit counts only the servers' ends), in the same run.
func BenchmarkIdleClientPeers(b *testing.B) {
	for _, impl := range []struct {
		name string
		new  func(*testing.B) *server
	}{{"sidecar", sidecarServer}, {"centrifuge", centrifugeServer}} {
		b.Run("impl="+impl.name, func(b *testing.B) {
			srv := impl.new(b)
			defer srv.close()
			first := dialReaders(b, srv, 1) // the topic exists before measuring
			defer first.close()
			var perClient, goroutines float64
			for range b.N {
				before, g0 := benchkit.MemInUse(), runtime.NumGoroutine()
				h := startHolder(b, srv, idleClients)
				waitFor(b, func() bool { return srv.subscribers() == idleClients+1 })
				after, g1 := benchkit.MemInUse(), runtime.NumGoroutine()
				perClient = float64(after-before) / idleClients
				goroutines = float64(g1-g0) / idleClients
				h.stop()
				waitFor(b, func() bool { return srv.subscribers() == 1 })
			}
			b.ReportMetric(perClient, "bytes/client")
			b.ReportMetric(goroutines, "goroutines/client")
		})
	}
}
