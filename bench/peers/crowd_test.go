package peers

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/centrifugal/centrifuge"
	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/sidecar"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// The environment of the crowd's child process (runCrowd).
const (
	envCrowdBase = "WSFAN_PEERS_CROWD_BASE" // the server's http://host:port
	envCrowdWS   = "WSFAN_PEERS_CROWD_WS"   // WebSocket clients
	envCrowdSSE  = "WSFAN_PEERS_CROWD_SSE"  // SSE clients
	envCrowdImpl = "WSFAN_PEERS_CROWD_IMPL" // "sidecar" or "centrifuge": the protocol the clients speak
)

// crowdClients is how many local clients BenchmarkCrowd connects, half
// over WebSocket, half over SSE.
const crowdClients = 10_000

// runCrowd is the crowd's child: the WebSocket and SSE clients, each
// counting the messages it receives; it answers the parent's "got" until
// its stdin ends.
func runCrowd() error {
	base := os.Getenv(envCrowdBase)
	nWS, _ := strconv.Atoi(os.Getenv(envCrowdWS))
	nSSE, _ := strconv.Atoi(os.Getenv(envCrowdSSE))
	// The sidecar's clients speak Thalex and count frames (one message
	// each); centrifuge's connect (the server subscribes them) and count
	// pushes, several of which may share a frame.
	wsURL := "ws" + strings.TrimPrefix(base, "http") + "/ws"
	sseURL := base + "/v1/stream?topic=" + topic
	hello := `{"id":1,"method":"public/subscribe","params":{"channels":["` + topic + `"]}}`
	count := func([]byte) int64 { return 1 }
	centrifuge := os.Getenv(envCrowdImpl) == "centrifuge"
	if centrifuge {
		wsURL = "ws" + strings.TrimPrefix(base, "http") + "/connection/websocket"
		hello = `{"id":1,"connect":{}}`
		sseURL = base + "/connection/sse?cf_connect=" + url.QueryEscape(hello)
		count = func(frame []byte) int64 { return int64(bytes.Count(frame, []byte(`"push"`))) }
	}
	var got atomic.Int64
	var wg sync.WaitGroup
	d := websocket.Dialer{ReadBufferSize: 4 << 10, WriteBufferSize: 1 << 10}
	var conns []*websocket.Conn
	for range nWS {
		ws, resp, err := d.Dial(wsURL, nil)
		if err != nil {
			return err
		}
		_ = resp.Body.Close()
		if err := ws.WriteMessage(websocket.TextMessage, []byte(hello)); err != nil {
			return err
		}
		conns = append(conns, ws)
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf bytes.Buffer
			for {
				_, r, err := ws.NextReader()
				if err != nil {
					return
				}
				if centrifuge { // the pushes in the frame; a sidecar frame is one message, left unread
					buf.Reset()
					if _, err := buf.ReadFrom(r); err != nil {
						return
					}
					got.Add(count(buf.Bytes()))
					continue
				}
				got.Add(1)
			}
		}()
	}
	var bodies []io.Closer
	httpClient := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: nSSE, MaxConnsPerHost: 0}}
	for range nSSE {
		resp, err := httpClient.Get(sseURL)
		if err != nil {
			return err
		}
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("SSE: %s", resp.Status)
		}
		bodies = append(bodies, resp.Body)
		wg.Add(1)
		go func() {
			defer wg.Done()
			br := bufio.NewReaderSize(resp.Body, 4<<10)
			for {
				line, err := br.ReadSlice('\n')
				if err != nil {
					return
				}
				if bytes.HasPrefix(line, []byte("data:")) {
					got.Add(count(line))
				}
			}
		}()
	}
	fmt.Println("ready")
	lines := bufio.NewScanner(os.Stdin)
	for lines.Scan() {
		if lines.Text() == "got" {
			fmt.Printf("got %d 0\n", got.Load())
		}
	}
	for _, ws := range conns {
		_ = ws.Close()
	}
	for _, b := range bodies {
		_ = b.Close()
	}
	wg.Wait()
	return lines.Err()
}

// BenchmarkCrowd is 10,000 local clients of one topic (half WebSocket,
// half SSE, in a process of their own) and a bystander among them: the
// fan-out rate to the crowd (200 messages, at most 20 ahead of it), then
// the bystander's latency at a steady 2 messages a second, each message's
// way to the last of 10,001 subscribers. impl=sidecar serves the crowd
// from the test exchange; its bystander's latency is given added to a
// client of the exchange itself (bystander-added-*). impl=centrifuge is
// centrifuge v0.40.1 serving the same crowd over its WebSocket and SSE
// transports, each client subscribed by the server as it connects, its
// application pings off (the clients answer none); its messages are
// published on the node, so its whole latency is its added one.
func BenchmarkCrowd(b *testing.B) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil || lim.Cur < crowdClients+2048 {
		b.Skipf("10,000 clients need more open files than the limit of %d (ulimit -n)", lim.Cur)
	}
	for _, impl := range []string{"sidecar", "centrifuge"} {
		b.Run("impl="+impl, func(b *testing.B) { benchCrowd(b, impl) })
	}
}

// crowdServer is a server of the crowd: where its clients connect
// (base, http://host:port), how many are connected, how a message is
// published, and its bystander's and baseline's servers (no baseline:
// the bystander's latency is all added).
type crowdServer struct {
	base      string
	connected func() int
	publish   func(data []byte)
	bystander *server
	baseline  *server
	close     func()
}

// sidecarCrowd is a sidecar of the test exchange.
func sidecarCrowd(b *testing.B) *crowdServer {
	ex := exchangetest.NewServer(thalex.Name)
	sc, err := sidecar.New(sidecar.Config{Upstream: ex.URL(), Protocol: thalex.Name, MaxClients: 2 * crowdClients})
	require.NoError(b, err)
	srv := serveSidecar(b, sc)
	return &crowdServer{
		base:      srv.base,
		connected: func() int { return len(sc.Status().Clients) },
		publish:   func(data []byte) { ex.Publish(topic, data) },
		bystander: &server{url: "ws" + strings.TrimPrefix(srv.base, "http") + "/ws", subscribe: []string{thalexSubscribe}},
		baseline:  &server{url: ex.URL(), subscribe: []string{thalexSubscribe}},
		close: func() {
			srv.close()
			ex.Close()
		},
	}
}

// centrifugeCrowd is a centrifuge node serving WebSocket and SSE, whose
// clients the server subscribes to the topic as they connect.
func centrifugeCrowd(b *testing.B) *crowdServer {
	node, err := centrifuge.New(centrifuge.Config{LogLevel: centrifuge.LogLevelNone})
	require.NoError(b, err)
	node.OnConnecting(func(context.Context, centrifuge.ConnectEvent) (centrifuge.ConnectReply, error) {
		return centrifuge.ConnectReply{
			Credentials:   &centrifuge.Credentials{UserID: "bench"},
			Subscriptions: map[string]centrifuge.SubscribeOptions{topic: {}},
		}, nil
	})
	node.OnConnect(func(*centrifuge.Client) {})
	require.NoError(b, node.Run())
	mux := http.NewServeMux()
	// The crowd's clients are plain readers that answer no application
	// ping (the sidecar's are WebSocket pings, which gorilla answers by
	// itself): centrifuge's pings are off, or it would drop them all
	// after 25 s.
	noPings := centrifuge.PingPongConfig{PingInterval: -1, PongTimeout: -1}
	mux.Handle("/connection/websocket", centrifuge.NewWebsocketHandler(node, centrifuge.WebsocketConfig{PingPongConfig: noPings}))
	mux.Handle("/connection/sse", centrifuge.NewSSEHandler(node, centrifuge.SSEConfig{PingPongConfig: noPings}))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(b, err)
	hs := &http.Server{Handler: mux}
	go func() { _ = hs.Serve(ln) }()
	base := "http://" + ln.Addr().String()
	return &crowdServer{
		base:      base,
		connected: func() int { return node.Hub().NumSubscribers(topic) },
		publish: func(data []byte) {
			if _, err := node.Publish(topic, data); err != nil {
				panic(err)
			}
		},
		bystander: &server{url: "ws" + strings.TrimPrefix(base, "http") + "/connection/websocket", subscribe: []string{`{"id":1,"connect":{}}`}},
		close: func() {
			_ = hs.Close()
			_ = node.Shutdown(context.Background())
		},
	}
}

func benchCrowd(b *testing.B, impl string) {
	srv := sidecarCrowd
	if impl == "centrifuge" {
		srv = centrifugeCrowd
	}
	cs := srv(b)
	defer cs.close()

	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envCrowdBase+"="+cs.base, envCrowdImpl+"="+impl,
		envCrowdWS+"="+strconv.Itoa(crowdClients/2), envCrowdSSE+"="+strconv.Itoa(crowdClients/2))
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	require.NoError(b, err)
	out, err := cmd.StdoutPipe()
	require.NoError(b, err)
	require.NoError(b, cmd.Start())
	child := &hopChild{cmd: cmd, in: in, out: bufio.NewScanner(out)}
	defer child.close()
	require.Equal(b, "ready", child.ask(b, ""))
	waitFor(b, func() bool { return cs.connected() == crowdClients })

	// The bystander, and the baseline (a client of the test exchange
	// itself), each in a process of its own (the crowd's 10,000 readers
	// would delay their reads in theirs).
	bystander := startHopChild(b, cs.bystander, 1)
	defer bystander.close()
	var baseline *hopChild
	if cs.baseline != nil {
		baseline = startHopChild(b, cs.baseline, 1)
		defer baseline.close()
	}
	waitFor(b, func() bool { return cs.connected() == crowdClients+1 })

	got := func() int64 {
		var crowd, zero int64
		_, err := fmt.Sscanf(child.ask(b, "got"), "got %d %d", &crowd, &zero)
		require.NoError(b, err)
		return crowd
	}
	waitGot := func(crowd int64) {
		deadline := time.Now().Add(2 * time.Minute)
		for {
			c := got()
			if c >= crowd {
				return
			}
			if time.Now().After(deadline) {
				b.Fatalf("the crowd got %d of %d", c, crowd)
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
	pad := strings.Repeat("x", len(payload)-len(`{"t":1700000000000000000,"pad":""}`))
	stamped := func() []byte {
		return []byte(`{"t":` + strconv.FormatInt(time.Now().UnixNano(), 10) + `,"pad":"` + pad + `"}`)
	}
	// Warm up: every client has its first message (the sidecar's
	// WebSocket ones counted their acknowledgement too: counts are taken
	// as deltas).
	crowd0 := got()
	cs.publish(stamped())
	waitGot(crowd0 + crowdClients)
	bystander.waitGot(b, 1)
	if baseline != nil {
		baseline.waitGot(b, 1)
	}
	crowd0 = got()

	b.ResetTimer()
	var rate float64
	for range b.N {
		// The fan-out rate: 200 messages, at most 20 ahead of the crowd.
		start := time.Now()
		for i := range 200 {
			cs.publish(payload)
			if i%20 == 19 {
				waitGot(crowd0 + int64(crowdClients*(i-19)))
			}
		}
		crowd0 += 200 * crowdClients
		waitGot(crowd0)
		rate = float64(200*crowdClients) / time.Since(start).Seconds()
	}
	b.StopTimer()

	// The bystander at a steady 2 messages a second (20,000 deliveries a
	// second to the crowd, well under what this machine fans out), for 5
	// seconds: each message's way to the last of 10,001 subscribers.
	from := "from " + strconv.FormatInt(time.Now().UnixNano(), 10)
	require.Equal(b, "ok", bystander.ask(b, from))
	if baseline != nil {
		require.Equal(b, "ok", baseline.ask(b, from))
	}
	tick := time.NewTicker(500 * time.Millisecond)
	for range 10 {
		<-tick.C
		cs.publish(stamped())
	}
	tick.Stop()
	waitGot(crowd0 + 10*crowdClients)
	var v, d [3]float64
	var cpu int64
	_, err = fmt.Sscanf(bystander.ask(b, "result"), "result %g %g %g %d", &v[0], &v[1], &v[2], &cpu)
	require.NoError(b, err)
	if baseline != nil {
		_, err = fmt.Sscanf(baseline.ask(b, "result"), "result %g %g %g %d", &d[0], &d[1], &d[2], &cpu)
		require.NoError(b, err)
	}
	p := [3]float64{v[0] - d[0], v[1] - d[1], v[2] - d[2]}

	b.ReportMetric(rate, "deliveries/s")
	b.ReportMetric(p[0], "bystander-added-p50-µs")
	b.ReportMetric(p[1], "bystander-added-p99-µs")
	b.ReportMetric(float64(rssBytes())/(1<<20), "rss-MiB")
	b.ReportMetric(float64(openFiles()), "fds")
}

// served is a sidecar served on loopback.
type served struct {
	base  string // http://host:port
	close func()
}

// serveSidecar serves sc through Serve (its listener cap and HTTP
// settings, as the binary serves it) on a loopback port.
func serveSidecar(b *testing.B, sc *sidecar.Server) *served {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(b, err)
	done := make(chan error, 1)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { done <- sc.Serve(ctx, ln) }()
	waitFor(b, sc.Ready)
	return &served{base: "http://" + ln.Addr().String(), close: func() { cancel(); <-done }}
}

// rssBytes is this process's resident set size.
func rssBytes() int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// openFiles counts this process's open descriptors.
func openFiles() int {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return 0
	}
	return len(entries)
}
