package sidecar_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/sidecar"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// BenchmarkHopLatency measures the latency the sidecar adds between the
// upstream's publish and a local client's receipt, at fixed rates, to 100
// WebSocket clients. The upstream (pkg/exchangetest) publishes payloads
// carrying their publish time ("t", Unix nanoseconds), evenly paced: each
// message waits for its own due time (start + i/rate), so no bursts go out
// unless the publisher falls behind. One client connected directly to the
// upstream is the baseline; the added latency is the difference of the
// percentiles of the clients behind the sidecar and the direct client's.
//
// clients=process runs the 101 clients in a child process, as the
// programs using a sidecar are: the kernel runs them as their data
// arrives, beside the sidecar's writes. clients=inproc runs them in the
// benchmark's own process, where Go's scheduler lets them read only
// between the sidecar's goroutines, so it reports the hop and the
// clients' own scheduling together.
//
// Each round lasts about half a second, after a warm-up whose messages are
// not counted. msgs/s is the rate achieved; late-µs the publisher's mean
// lateness against its schedule (timer resolution, a loaded machine).
func BenchmarkHopLatency(b *testing.B) {
	for _, where := range []string{"process", "inproc"} {
		for _, rate := range []int{1000, 5000} {
			b.Run(fmt.Sprintf("clients=%s/rate=%d", where, rate), func(b *testing.B) { benchHop(b, where, rate, nil) })
		}
	}
}

// benchHop runs one hop benchmark, the sidecar's Config tuned by tune
// (nil: as is).
func benchHop(b *testing.B, where string, rate int, tune func(*sidecar.Config)) {
	const clients = 100
	up := exchangetest.NewServer(thalex.Name)
	defer up.Close()
	sc, url := startBenchSidecar(b, up, tune)
	defer sc.Close()
	subscribe := dialects[0].subscribe(1, benchTopic)
	var hc hopClients
	if where == "process" {
		hc = startHopChild(b, url, up.URL(), clients, subscribe)
	} else {
		hc = &hopInproc{
			via:    dialReaders(b, url, clients, subscribe, true),
			direct: dialReaders(b, up.URL(), 1, subscribe, true),
		}
	}
	defer hc.close()
	require.NoError(b, up.WaitSubscribers(context.Background(), benchTopic, 2))
	waitFor2(b, func() bool { return countAttached(sc) == clients })

	// Stamped payloads are as long as benchPayload.
	pad := strings.Repeat("x", len(benchPayload)-len(`{"t":1700000000000000000,"pad":""}`))
	interval := time.Second / time.Duration(rate)
	msgs := rate / 2
	var late time.Duration
	var sent int64
	paced := func(n int) time.Duration {
		start := time.Now()
		for i := range n {
			due := start.Add(time.Duration(i) * interval)
			if d := time.Until(due); d > 0 {
				time.Sleep(d)
			}
			now := time.Now()
			late += now.Sub(due)
			up.Publish(benchTopic, []byte(`{"t":`+strconv.FormatInt(now.UnixNano(), 10)+`,"pad":"`+pad+`"}`))
		}
		elapsed := time.Since(start)
		sent += int64(n)
		hc.wait(b, clients*sent, sent)
		return elapsed
	}
	paced(rate / 5) // warm up: connections, buffers, goroutine stacks
	late = 0
	hc.start(b, time.Now().UnixNano())

	b.ReportAllocs()
	b.ResetTimer()
	var elapsed time.Duration
	for range b.N {
		elapsed += paced(msgs)
	}
	b.StopTimer()
	r := hc.result(b)
	b.ReportMetric(r.p50-r.d50, "added-p50-µs")
	b.ReportMetric(r.p99-r.d99, "added-p99-µs")
	b.ReportMetric(r.p50, "p50-µs")
	b.ReportMetric(r.p99, "p99-µs")
	b.ReportMetric(r.d50, "direct-p50-µs")
	b.ReportMetric(r.d99, "direct-p99-µs")
	b.ReportMetric(float64(msgs*b.N)/elapsed.Seconds(), "msgs/s")
	b.ReportMetric(float64(late.Microseconds())/float64(msgs*b.N), "late-µs")
}

// hopClients are the hop benchmark's local clients: 100 behind the
// sidecar ("via") and one connected straight to the upstream ("direct").
type hopClients interface {
	// start records the frames published from Unix time from on.
	start(b *testing.B, from int64)
	// wait waits until via and direct frames have arrived in all.
	wait(b *testing.B, via, direct int64)
	// result ends the clients and returns their latency percentiles.
	result(b *testing.B) hopResult
	// close ends the clients, if result did not.
	close()
}

// hopResult is the latency of the clients behind the sidecar and of the
// direct one, in µs.
type hopResult struct{ p50, p99, d50, d99 float64 }

// percentile returns the p-th percentile of d in µs (d is sorted).
func percentile(d []time.Duration, p float64) float64 {
	if len(d) == 0 {
		return 0
	}
	slices.Sort(d)
	return float64(d[int(p*float64(len(d)-1))].Nanoseconds()) / 1e3
}

// hopInproc runs the clients in the benchmark's process.
type hopInproc struct{ via, direct *readers }

func (h *hopInproc) start(_ *testing.B, from int64) {
	h.via.from.Store(from)
	h.direct.from.Store(from)
}

func (h *hopInproc) wait(b *testing.B, via, direct int64) {
	h.via.waitGot(b, via)
	h.direct.waitGot(b, direct)
}

func (h *hopInproc) result(*testing.B) hopResult {
	h.close()
	return hopResult{
		p50: percentile(h.via.lat, 0.50), p99: percentile(h.via.lat, 0.99),
		d50: percentile(h.direct.lat, 0.50), d99: percentile(h.direct.lat, 0.99),
	}
}

func (h *hopInproc) close() {
	h.via.close()
	h.direct.close()
}

// The child process: hopChildEnv, set in its environment, makes the test
// binary run the clients instead of the tests (TestMain). The parent
// drives it with lines on its stdin ("from N", "got", "result") and reads
// one line of answer to each; at the end of stdin it exits.
const (
	hopChildEnv     = "WSFAN_HOP_CLIENTS" // the number of clients behind the sidecar
	hopViaEnv       = "WSFAN_HOP_VIA"
	hopDirectEnv    = "WSFAN_HOP_DIRECT"
	hopSubscribeEnv = "WSFAN_HOP_SUBSCRIBE"
)

// hopChild is the parent's handle on the child process.
type hopChild struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Scanner
}

// startHopChild runs the clients in a child process and waits until they
// are connected and subscribed.
func startHopChild(b *testing.B, via, direct string, n int, subscribe string) *hopChild {
	b.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(),
		hopChildEnv+"="+strconv.Itoa(n), hopViaEnv+"="+via, hopDirectEnv+"="+direct, hopSubscribeEnv+"="+subscribe)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	require.NoError(b, err)
	out, err := cmd.StdoutPipe()
	require.NoError(b, err)
	require.NoError(b, cmd.Start())
	h := &hopChild{cmd: cmd, in: in, out: bufio.NewScanner(out)}
	require.Equal(b, "ready", h.line(b))
	return h
}

// line reads the child's next line.
func (h *hopChild) line(b *testing.B) string {
	b.Helper()
	if !h.out.Scan() {
		b.Fatalf("hop clients' process ended: %v", h.out.Err())
	}
	return h.out.Text()
}

func (h *hopChild) ask(b *testing.B, command string) string {
	b.Helper()
	_, err := fmt.Fprintln(h.in, command)
	require.NoError(b, err)
	return h.line(b)
}

func (h *hopChild) start(b *testing.B, from int64) {
	require.Equal(b, "ok", h.ask(b, "from "+strconv.FormatInt(from, 10)))
}

func (h *hopChild) wait(b *testing.B, via, direct int64) {
	deadline := time.Now().Add(time.Minute)
	for {
		var v, d int64
		_, err := fmt.Sscanf(h.ask(b, "got"), "got %d %d", &v, &d)
		require.NoError(b, err)
		if v >= via && d >= direct {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("received %d of %d behind the sidecar, %d of %d direct", v, via, d, direct)
		}
		time.Sleep(time.Millisecond)
	}
}

func (h *hopChild) result(b *testing.B) hopResult {
	var r hopResult
	_, err := fmt.Sscanf(h.ask(b, "result"), "result %g %g %g %g", &r.p50, &r.p99, &r.d50, &r.d99)
	require.NoError(b, err)
	return r
}

// close ends stdin, which ends the child, and waits for it.
func (h *hopChild) close() {
	_ = h.in.Close()
	_ = h.cmd.Wait()
}

// runHopChild is the child process's main: it connects the clients,
// says "ready", and answers the parent's commands until its stdin ends.
func runHopChild(stdin io.Reader, stdout io.Writer) error {
	n, err := strconv.Atoi(os.Getenv(hopChildEnv))
	if err != nil {
		return err
	}
	subscribe := os.Getenv(hopSubscribeEnv)
	via, err := connectReaders(os.Getenv(hopViaEnv), n, subscribe, true)
	if err != nil {
		return err
	}
	defer via.close()
	direct, err := connectReaders(os.Getenv(hopDirectEnv), 1, subscribe, true)
	if err != nil {
		return err
	}
	defer direct.close()
	h := &hopInproc{via: via, direct: direct}
	if _, err := fmt.Fprintln(stdout, "ready"); err != nil {
		return err
	}
	lines := bufio.NewScanner(stdin)
	for lines.Scan() {
		var answer string
		switch cmd, arg, _ := strings.Cut(lines.Text(), " "); cmd {
		case "from":
			from, err := strconv.ParseInt(arg, 10, 64)
			if err != nil {
				return err
			}
			h.start(nil, from)
			answer = "ok"
		case "got":
			answer = fmt.Sprintf("got %d %d", via.got.Load(), direct.got.Load())
		case "result":
			r := h.result(nil)
			answer = fmt.Sprintf("result %g %g %g %g", r.p50, r.p99, r.d50, r.d99)
		default:
			return fmt.Errorf("unknown command %q", lines.Text())
		}
		if _, err := fmt.Fprintln(stdout, answer); err != nil {
			return err
		}
	}
	return lines.Err()
}
