package peers

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/benchkit"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// The environment of the hop clients' child process (runHopClients).
const (
	envHopVia       = "WSFAN_PEERS_HOP_VIA"       // the server's URL
	envHopSubscribe = "WSFAN_PEERS_HOP_SUBSCRIBE" // JSON array of its subscribe frames
	envHopClients   = "WSFAN_PEERS_HOP_CLIENTS"   // how many clients behind the server
)

// hopClients are clients that record, for every stamped payload they
// receive ("t": its publish time in Unix nanoseconds, anywhere in a
// frame, several pushes a frame counted each), how long it took.
type hopClients struct {
	got  atomic.Int64
	from atomic.Int64 // stamps before this are not recorded
	wg   sync.WaitGroup
	mu   sync.Mutex
	lat  []time.Duration
	ws   []*websocket.Conn
}

// connectHopClients connects n clients to url, each sending frames and
// reading one answer to each.
func connectHopClients(url string, n int, frames []string) (*hopClients, error) {
	h := &hopClients{}
	for range n {
		ws, resp, err := websocket.DefaultDialer.Dial(url, nil)
		if err != nil {
			h.close()
			return nil, err
		}
		_ = resp.Body.Close()
		h.ws = append(h.ws, ws)
		for _, f := range frames {
			if err := ws.WriteMessage(websocket.TextMessage, []byte(f)); err != nil {
				h.close()
				return nil, err
			}
			if _, _, err := ws.ReadMessage(); err != nil {
				h.close()
				return nil, err
			}
		}
	}
	for _, ws := range h.ws {
		h.wg.Add(1)
		go h.read(ws)
	}
	return h, nil
}

var stampKey = []byte(`"t":`)

// read records the stamps of ws's frames until it closes.
func (h *hopClients) read(ws *websocket.Conn) {
	defer h.wg.Done()
	var lat []time.Duration
	defer func() {
		h.mu.Lock()
		h.lat = append(h.lat, lat...)
		h.mu.Unlock()
	}()
	var buf bytes.Buffer // kept, as in dialReaders: no garbage a frame
	for {
		_, rd, err := ws.NextReader()
		if err != nil {
			return
		}
		buf.Reset()
		if _, err := buf.ReadFrom(rd); err != nil {
			return
		}
		now := time.Now().UnixNano()
		frame := buf.Bytes()
		for {
			i := bytes.Index(frame, stampKey)
			if i < 0 {
				break
			}
			frame = frame[i+len(stampKey):]
			end := 0
			for end < len(frame) && frame[end] >= '0' && frame[end] <= '9' {
				end++
			}
			stamp, _ := strconv.ParseInt(string(frame[:end]), 10, 64)
			h.got.Add(1)
			if from := h.from.Load(); from != 0 && stamp >= from {
				lat = append(lat, time.Duration(now-stamp))
			}
		}
	}
}

// close ends the clients and waits for their readers.
func (h *hopClients) close() {
	for _, ws := range h.ws {
		_ = ws.Close()
	}
	h.wg.Wait()
}

// percentiles returns the p50, p99 and p99.9 of the recorded latencies,
// in µs.
func (h *hopClients) percentiles() [3]float64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	slices.Sort(h.lat)
	var out [3]float64
	for i, p := range []float64{0.50, 0.99, 0.999} {
		if len(h.lat) > 0 {
			out[i] = float64(h.lat[int(p*float64(len(h.lat)-1))].Nanoseconds()) / 1e3
		}
	}
	return out
}

// runHopClients is the child's main: the clients behind the server; it
// answers the parent's lines ("from N", "got", "result") until its stdin
// ends.
func runHopClients() error {
	n, err := strconv.Atoi(os.Getenv(envHopClients))
	if err != nil {
		return err
	}
	var frames []string
	if err := json.Unmarshal([]byte(os.Getenv(envHopSubscribe)), &frames); err != nil {
		return err
	}
	via, err := connectHopClients(os.Getenv(envHopVia), n, frames)
	if err != nil {
		return err
	}
	fmt.Println("ready")
	var cpu0 time.Duration // this process's CPU time when the measured span began
	lines := bufio.NewScanner(os.Stdin)
	for lines.Scan() {
		cmd, arg, _ := strings.Cut(lines.Text(), " ")
		switch cmd {
		case "from":
			from, _ := strconv.ParseInt(arg, 10, 64)
			via.from.Store(from)
			cpu0 = benchkit.ProcessCPU()
			fmt.Println("ok")
		case "got":
			fmt.Printf("got %d\n", via.got.Load())
		case "result":
			cpu := benchkit.ProcessCPU() - cpu0
			via.close()
			v := via.percentiles()
			fmt.Printf("result %g %g %g %d\n", v[0], v[1], v[2], cpu.Nanoseconds())
		}
	}
	via.close()
	return lines.Err()
}

// hopChild is the parent's handle on the hop clients' process.
type hopChild struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Scanner
}

func startHopChild(b *testing.B, srv *server, n int) *hopChild {
	b.Helper()
	frames, _ := json.Marshal(srv.subscribe)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envHopVia+"="+srv.url, envHopSubscribe+"="+string(frames),
		envHopClients+"="+strconv.Itoa(n))
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	require.NoError(b, err)
	out, err := cmd.StdoutPipe()
	require.NoError(b, err)
	require.NoError(b, cmd.Start())
	h := &hopChild{cmd: cmd, in: in, out: bufio.NewScanner(out)}
	require.Equal(b, "ready", h.ask(b, ""))
	return h
}

// ask sends command (none when empty) and returns the child's answer.
func (h *hopChild) ask(b *testing.B, command string) string {
	b.Helper()
	if command != "" {
		_, err := fmt.Fprintln(h.in, command)
		require.NoError(b, err)
	}
	if !h.out.Scan() {
		b.Fatalf("the hop clients' process ended: %v", h.out.Err())
	}
	return h.out.Text()
}

// waitGot waits until the clients have received want deliveries.
func (h *hopChild) waitGot(b *testing.B, want int64) {
	deadline := time.Now().Add(time.Minute)
	for {
		var got int64
		_, err := fmt.Sscanf(h.ask(b, "got"), "got %d", &got)
		require.NoError(b, err)
		if got >= want {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("received %d of %d", got, want)
		}
		time.Sleep(time.Millisecond)
	}
}

func (h *hopChild) close() {
	_ = h.in.Close()
	_ = h.cmd.Wait()
}

// BenchmarkHopPeers measures a message's trip through a fan-out server to
// 100 clients in another process, evenly paced at 1,000 and 5,000
// messages a second, stamped payloads of the ticker's size: for the
// sidecar from the test exchange's write (its upstream) to the client,
// for centrifuge from node.Publish to the client. impl=floor is the
// plainest fan-out there is, fed by the same upstream (floorServer): what
// each read of the upstream's socket brought, the exchange's frames as
// they are, written to the 100 clients by the reading goroutine and a
// helper a processor more, what the kernel allows on this machine.
// impl=direct is the baseline all are measured
// against, the same one: one client connected straight to the test
// exchange, no fan-out server, at the same rate; a server's added latency
// is its percentile minus the baseline's. Each round lasts half a second.
// For the sidecar, queued-p50/p99-µs are its delivery histogram's (its
// receive to the frames built for its clients, warm-up included): what
// of the hop is the hub's; the rest is its writers', the kernel's and the
// clients' process's.
func BenchmarkHopPeers(b *testing.B) {
	for _, rate := range []int{1000, 5000} {
		for _, impl := range []string{"sidecar", "centrifuge", "floor", "direct"} {
			b.Run(fmt.Sprintf("rate=%d/impl=%s", rate, impl), func(b *testing.B) { benchHop(b, impl, rate) })
		}
	}
}

func benchHop(b *testing.B, impl string, rate int) {
	clients := 100
	// The test exchange: the sidecar's upstream, and the baseline's.
	ex := exchangetest.NewServer(thalex.Name)
	defer ex.Close()
	var srv *server
	switch impl {
	case "sidecar":
		srv = sidecarOn(b, ex)
	case "centrifuge":
		srv = centrifugeServer(b)
	case "floor":
		srv = floorServer(b, ex)
	default: // direct
		srv = &server{url: ex.URL(), subscribe: []string{thalexSubscribe}, close: func() {}}
		clients = 1
	}
	defer srv.close()
	child := startHopChild(b, srv, clients)
	defer child.close()

	pad := strings.Repeat("x", len(payload)-len(`{"t":1700000000000000000,"pad":""}`))
	interval := time.Second / time.Duration(rate)
	var sent int64
	paced := func(n int) {
		start := time.Now()
		for i := range n {
			if d := time.Until(start.Add(time.Duration(i) * interval)); d > 0 {
				time.Sleep(d)
			}
			p := []byte(`{"t":` + strconv.FormatInt(time.Now().UnixNano(), 10) + `,"pad":"` + pad + `"}`)
			if impl == "centrifuge" {
				srv.publishData(p)
			} else {
				ex.Publish(topic, p) // the sidecar's upstream, or the direct client's
			}
		}
		sent += int64(n)
		child.waitGot(b, int64(clients)*sent)
	}
	paced(rate / 5) // warm up
	require.Equal(b, "ok", child.ask(b, "from "+strconv.FormatInt(time.Now().UnixNano(), 10)))
	b.ResetTimer()
	cpu0, sent0 := benchkit.ProcessCPU(), sent
	for range b.N {
		paced(rate / 2)
	}
	b.StopTimer()
	cpu, msgs := benchkit.ProcessCPU()-cpu0, float64(sent-sent0)
	var r [3]float64
	var clientsCPU int64
	_, err := fmt.Sscanf(child.ask(b, "result"), "result %g %g %g %d", &r[0], &r[1], &r[2], &clientsCPU)
	require.NoError(b, err)
	b.ReportMetric(r[0], "p50-µs")
	b.ReportMetric(r[1], "p99-µs")
	b.ReportMetric(r[2], "p99.9-µs")
	if srv.queued != nil { // the sidecar's own part, warm-up included
		p50, p99 := srv.queued()
		b.ReportMetric(p50, "queued-p50-µs")
		b.ReportMetric(p99, "queued-p99-µs")
	}
	// Where a message's time goes: the server's process (the test
	// exchange included) and the clients' process, which reads 100
	// frames a message on the same two cores.
	b.ReportMetric(float64(cpu.Microseconds())/msgs, "server-cpu-µs/msg")
	b.ReportMetric(float64(clientsCPU)/1e3/msgs, "clients-cpu-µs/msg")
}
