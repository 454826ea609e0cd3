package bench

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// serverEnv, set in its environment, turns the test binary into the node
// server (nodeHandler) instead of running tests: the benchmarks start
// their out-of-process server by running their own binary again, so there
// is nothing to build and the server is always the same code as the
// in-process one.
const serverEnv = "WSFAN_BENCH_NODE_SERVER"

// readyPrefix starts the line the child prints once it listens.
const readyPrefix = "listening on "

func TestMain(m *testing.M) {
	if os.Getenv(serverEnv) != "" {
		if err := serveChild(os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "node server:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// serveChild is the child process: it serves nodeHandler on a free
// loopback port, prints "listening on <addr>" to ready, and serves until
// stdin ends, which happens when the parent closes it or exits for any
// reason (even killed), so a child never outlives its benchmark.
func serveChild(stdin io.Reader, ready io.Writer) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: nodeHandler()}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	if _, err := fmt.Fprintln(ready, readyPrefix+ln.Addr().String()); err != nil {
		return err
	}
	ended := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, stdin)
		close(ended)
	}()
	select {
	case <-ended:
		return nil
	case err := <-served:
		return err
	}
}

// nodeServer is where the node server of a benchmark runs.
type nodeServer struct {
	name  string                      // the server= key of the benchmark name
	start func(tb testing.TB) nodeURL // starts it for tb's lifetime
}

// nodeURL is a running node server.
type nodeURL struct {
	base string // ws://127.0.0.1:port
	pid  int    // its process when it runs in a child, else 0
}

// probe starts measuring the server's own usage when it runs in a child
// (metrics server-cpu-µs/op, server-ctxsw/op), or returns nil.
func (n nodeURL) probe() *usageProbe {
	if n.pid == 0 {
		return nil
	}
	return startUsage(n.pid, "server-")
}

// nodeServers are the two modes every echo and blast benchmark runs in:
// in the benchmark's own process, where the server competes with the
// client for the same Go scheduler and every hand-off can run on the
// thread that just made it runnable; and in a child process, as a
// deployed client talks to a node.
var nodeServers = []nodeServer{
	{"inproc", startInProcess},
	{"process", startProcess},
}

// startInProcess serves nodeHandler from this process until tb ends.
func startInProcess(tb testing.TB) nodeURL {
	srv := httptest.NewServer(nodeHandler())
	tb.Cleanup(srv.Close)
	return nodeURL{base: "ws" + strings.TrimPrefix(srv.URL, "http")}
}

// startProcess runs nodeHandler in a child process (this test binary,
// re-executed with serverEnv set) and waits for it to listen. The child is
// killed and reaped when tb ends; if this process dies first, the child
// sees its stdin close and exits.
func startProcess(tb testing.TB) nodeURL {
	exe, err := os.Executable()
	if err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), serverEnv+"=1")
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		_ = stdin.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})

	addr := make(chan string, 1)
	go func() { // ends when the child prints its line, exits or is killed
		line, err := bufio.NewReader(stdout).ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			line = ""
		}
		addr <- line
	}()
	select {
	case line := <-addr:
		a, ok := strings.CutPrefix(strings.TrimSpace(line), readyPrefix)
		if !ok {
			tb.Fatalf("node server process: want %q..., got %q", readyPrefix, line)
		}
		return nodeURL{base: "ws://" + a, pid: cmd.Process.Pid}
	case <-time.After(setupTimeout):
		tb.Fatalf("node server process not listening within %v", setupTimeout)
		return nodeURL{}
	}
}
