package sidecar_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
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
	"github.com/wsfan/wsfan/internal/rawws"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/sidecar"
	"github.com/wsfan/wsfan/pkg/thalex"
)

const benchTopic = "ticker.BTC-PERPETUAL.raw"

// benchPayload is a Thalex ticker of realistic size (~300 bytes).
var benchPayload = []byte(`{"best_bid_price":64999.5,"best_bid_amount":1.251,"best_ask_price":65000.5,"best_ask_amount":1.231,` +
	`"mark_price":65000,"mark_timestamp":1795331967.39783,"index":64987,"funding_rate":-0.0000752493,` +
	`"volume_24h":65000002,"open_interest":32500000,"last_price":65000.5,"high_24h":65500,"low_24h":64200}`)

// readers are local WebSocket clients counting the frames they receive
// and, when stamped, recording the latency of every frame carrying a
// publish time ("t", Unix nanoseconds).
type readers struct {
	conns   []*websocket.Conn
	streams []io.Closer // SSE readers' response bodies (connectSSEReaders)
	got     atomic.Int64
	wg      sync.WaitGroup
	stamped bool
	from    atomic.Int64 // stamped: frames published before this (Unix ns) are not recorded
	// upstreamDropped, when set, is what the sidecar's upstream buffer
	// dropped (upstreamDropped): why frames waited for never come.
	upstreamDropped func() uint64

	mu  sync.Mutex
	lat []time.Duration // stamped: merged when each reader ends
}

// dialReaders connects n clients to url, each sending subscribe (if not
// empty) and reading the acknowledgement, then counting frames.
func dialReaders(b *testing.B, url string, n int, subscribe string, stamped bool) *readers {
	b.Helper()
	r, err := connectReaders(url, n, subscribe, stamped)
	require.NoError(b, err)
	return r
}

// connectReaders is dialReaders for a caller with no testing.B (the hop
// benchmark's child process).
func connectReaders(url string, n int, subscribe string, stamped bool) (*readers, error) {
	r := &readers{stamped: stamped}
	d := websocket.Dialer{ReadBufferSize: 16 << 10}
	for range n {
		ws, resp, err := d.Dial(url, nil)
		if err != nil {
			r.close()
			return nil, err
		}
		_ = resp.Body.Close()
		r.conns = append(r.conns, ws)
		if subscribe != "" {
			if err := ws.WriteMessage(websocket.TextMessage, []byte(subscribe)); err != nil {
				r.close()
				return nil, err
			}
			if _, _, err := ws.ReadMessage(); err != nil {
				r.close()
				return nil, err
			}
		}
	}
	for _, ws := range r.conns {
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			if r.stamped {
				r.readStamped(ws)
				return
			}
			for {
				if _, _, err := ws.NextReader(); err != nil {
					return
				}
				r.got.Add(1)
			}
		}()
	}
	return r, nil
}

func (r *readers) readStamped(ws *websocket.Conn) {
	var lat []time.Duration
	var buf bytes.Buffer
	defer func() {
		r.mu.Lock()
		r.lat = append(r.lat, lat...)
		r.mu.Unlock()
	}()
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
		if sent, ok := stampOf(buf.Bytes()); ok && sent >= r.from.Load() {
			lat = append(lat, time.Duration(now-sent))
		}
		r.got.Add(1)
	}
}

// stampOf returns the publish time in a frame's "t" field.
func stampOf(data []byte) (int64, bool) {
	i := bytes.Index(data, []byte(`"t":`))
	if i < 0 {
		return 0, false
	}
	i += 4
	end := i
	for end < len(data) && data[end] >= '0' && data[end] <= '9' {
		end++
	}
	t, err := strconv.ParseInt(string(data[i:end]), 10, 64)
	return t, err == nil
}

func (r *readers) close() {
	for _, ws := range r.conns {
		_ = ws.Close()
	}
	for _, body := range r.streams {
		_ = body.Close()
	}
	r.wg.Wait()
}

// waitGot waits until the readers have received n frames in all. When
// none came for a second and the sidecar's upstream buffer dropped
// some, it fails at once saying so: on a machine that starves the
// sidecar's pump for longer than its 1,024 messages of buffer take to
// fill, the publisher's bursts are dropped (and counted), not stalled.
func (r *readers) waitGot(b *testing.B, n int64) {
	b.Helper()
	deadline := time.Now().Add(time.Minute)
	last, since := r.got.Load(), time.Now()
	for got := last; got < n; got = r.got.Load() {
		now := time.Now()
		switch {
		case now.After(deadline):
			b.Fatalf("received %d of %d", got, n)
		case got != last:
			last, since = got, now
		case now.Sub(since) > time.Second && r.upstreamDropped != nil:
			if d := r.upstreamDropped(); d > 0 {
				b.Fatalf("received %d of %d: the sidecar's upstream buffer dropped %d messages (its pump was starved while the publisher ran ahead)", got, n, d)
			}
			since = now
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// upstreamDropped sums what the sidecar's upstream buffers dropped
// (/v1/status upstream_dropped).
func upstreamDropped(sc *sidecar.Server) uint64 {
	var n uint64
	for _, t := range sc.Status().Topics {
		n += t.UpstreamDropped
	}
	return n
}

// pump publishes msgs messages upstream, keeping the readers within a
// window of the publisher so queues stay bounded, and waits for every
// delivery.
func pump(b *testing.B, up *exchangetest.Server, rd *readers, clients, msgs int) {
	b.Helper()
	const window = 1000
	base := rd.got.Load()
	target := base + int64(clients*msgs)
	for i := range msgs {
		up.Publish(benchTopic, benchPayload)
		if i%window == window-1 {
			for rd.got.Load() < base+int64((i+1-window)*clients) {
				runtime.Gosched()
			}
		}
	}
	rd.waitGot(b, target)
}

// connectSSEReaders opens n SSE streams of topic on the sidecar at base
// (http://host:port), each counting the events it receives.
func connectSSEReaders(base string, n int, topic string) (*readers, error) {
	r := &readers{}
	for range n {
		resp, err := http.Get(base + "/v1/stream?topic=" + url.QueryEscape(topic))
		if err != nil {
			r.close()
			return nil, err
		}
		r.streams = append(r.streams, resp.Body)
		br := bufio.NewReaderSize(resp.Body, 16<<10)
		if _, err := br.ReadSlice('\n'); err != nil { // the stream's opening comment
			r.close()
			return nil, err
		}
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			for {
				line, err := br.ReadSlice('\n')
				if err != nil {
					return
				}
				if bytes.HasPrefix(line, []byte("data:")) {
					r.got.Add(1)
				}
			}
		}()
	}
	return r, nil
}

// msgsFor keeps each run near 100k deliveries.
func msgsFor(clients int) int { return max(100, 100_000/clients) }

// BenchmarkFanOut measures deliveries per second from one upstream topic
// to N local clients: through the sidecar to WebSocket clients, to
// WebSocket clients that asked for stamps (clients=N/stamped: each
// frame's send stamp written at that client's write) and to SSE streams
// (clients=N/sse), and through a naive fan-out (one client subscription,
// a PreparedMessage per frame, a goroutine per local client calling
// WritePreparedMessage) fed by the same upstream with the same frames.
func BenchmarkFanOut(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		b.Run(fmt.Sprintf("clients=%d/sidecar", n), func(b *testing.B) { benchSidecar(b, n, "ws") })
		b.Run(fmt.Sprintf("clients=%d/stamped", n), func(b *testing.B) { benchSidecar(b, n, "stamped") })
		b.Run(fmt.Sprintf("clients=%d/naive", n), func(b *testing.B) { benchNaive(b, n) })
		b.Run(fmt.Sprintf("clients=%d/sse", n), func(b *testing.B) { benchSidecar(b, n, "sse") })
	}
}

// benchSidecar measures the sidecar's fan-out to n clients of a kind:
// WebSocket ("ws"), WebSocket asking for stamps ("stamped"), or SSE
// streams ("sse"), one delivery's cost beside another's.
func benchSidecar(b *testing.B, n int, kind string) {
	up := exchangetest.NewServer(thalex.Name)
	defer up.Close()
	sc, url := startBenchSidecar(b, up, nil)
	defer sc.Close()
	var rd *readers
	switch kind {
	case "sse":
		var err error
		rd, err = connectSSEReaders("http"+strings.TrimSuffix(strings.TrimPrefix(url, "ws"), "/ws"), n, benchTopic)
		require.NoError(b, err)
	case "stamped":
		rd = dialReaders(b, url+"?notify=stamps", n, dialects[0].subscribe(1, benchTopic), false)
	default:
		rd = dialReaders(b, url, n, dialects[0].subscribe(1, benchTopic), false)
	}
	defer rd.close()
	rd.upstreamDropped = func() uint64 { return upstreamDropped(sc) }
	waitFor2(b, func() bool { return countAttached(sc) == n })
	msgs := msgsFor(n)
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		pump(b, up, rd, n, msgs)
	}
	b.ReportMetric(float64(n*msgs*b.N)/time.Since(start).Seconds(), "deliveries/s")
}

func startBenchSidecar(b *testing.B, up *exchangetest.Server, tune func(*sidecar.Config)) (*sidecar.Server, string) {
	b.Helper()
	cfg := sidecar.Config{Upstream: up.URL(), Protocol: "thalex", MaxClients: 100_000}
	if tune != nil {
		tune(&cfg)
	}
	sc, err := sidecar.New(cfg)
	require.NoError(b, err)
	hs := httptest.NewServer(sc.Handler())
	b.Cleanup(hs.Close)
	waitFor2(b, sc.Ready)
	return sc, "ws" + strings.TrimPrefix(hs.URL, "http") + "/ws"
}

func countAttached(sc *sidecar.Server) int {
	n := 0
	for _, c := range sc.Status().Clients {
		if c.Topics > 0 {
			n++
		}
	}
	return n
}

func waitFor2(b *testing.B, cond func() bool) {
	b.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			b.Fatal("timed out")
		}
		time.Sleep(time.Millisecond)
	}
}

// naiveFanOut is the baseline: for each upstream message one
// PreparedMessage, sent to a goroutine per local client that writes it.
type naiveFanOut struct {
	mu    sync.Mutex
	chans []chan *websocket.PreparedMessage
	wg    sync.WaitGroup
}

func (f *naiveFanOut) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ws, err := (&websocket.Upgrader{}).Upgrade(w, r, nil)
	if err != nil {
		return
	}
	ch := make(chan *websocket.PreparedMessage, 4096)
	f.mu.Lock()
	f.chans = append(f.chans, ch)
	f.mu.Unlock()
	f.wg.Add(1)
	defer f.wg.Done()
	go func() { // discard reads, notice the close
		for {
			if _, _, err := ws.NextReader(); err != nil {
				_ = ws.Close()
				return
			}
		}
	}()
	for pm := range ch {
		if ws.WritePreparedMessage(pm) != nil {
			break
		}
	}
	_ = ws.Close()
}

func benchNaive(b *testing.B, n int) {
	up := exchangetest.NewServer(thalex.Name)
	defer up.Close()
	f := &naiveFanOut{}
	hs := httptest.NewServer(f)
	defer hs.Close()
	c, err := client.Dial(context.Background(), up.URL(), client.WithProtocol(thalex.Protocol()), client.Buffer(8192))
	require.NoError(b, err)
	defer c.Close()
	sub, err := c.Subscribe(context.Background(), []string{benchTopic})
	require.NoError(b, err)
	rd := dialReaders(b, "ws"+strings.TrimPrefix(hs.URL, "http"), n, "", false)
	defer rd.close()
	waitFor2(b, func() bool { f.mu.Lock(); defer f.mu.Unlock(); return len(f.chans) == n })
	f.mu.Lock()
	chans := slices.Clone(f.chans)
	f.mu.Unlock()
	fanned := make(chan struct{})
	go func() { // the broadcaster: the same frame the sidecar sends
		defer close(fanned)
		for m := range sub.C() {
			frame := append(append([]byte(`{"channel_name":"`+benchTopic+`","notification":`), m.Data...), '}')
			pm, err := websocket.NewPreparedMessage(websocket.TextMessage, frame)
			if err != nil {
				panic(err)
			}
			for _, ch := range chans {
				ch <- pm
			}
		}
	}()
	msgs := msgsFor(n)
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		pump(b, up, rd, n, msgs)
	}
	b.ReportMetric(float64(n*msgs*b.N)/time.Since(start).Seconds(), "deliveries/s")
	b.StopTimer()
	_ = c.Close()
	<-fanned
	for _, ch := range chans {
		close(ch)
	}
	rd.close()
	hs.CloseClientConnections()
	f.wg.Wait()
}

// BenchmarkIdleClientMemory measures the sidecar's memory per connected,
// subscribed, idle local client: the growth of heap spans in use plus
// goroutine stacks (HeapInuse + StackInuse, after two collections) over
// 1,000 clients, once each has subscribed (the sidecar attached it and
// queued the acknowledgement) and nothing is published. The clients are
// bare TCP connections that did a handshake by hand and run no goroutine,
// so their own memory barely counts. goroutines/client is the sidecar's
// goroutines per idle client.
func BenchmarkIdleClientMemory(b *testing.B) {
	const n = 1000
	up := exchangetest.NewServer(thalex.Name)
	defer up.Close()
	sc, url := startBenchSidecar(b, up, nil)
	defer sc.Close()
	addr := strings.TrimSuffix(strings.TrimPrefix(url, "ws://"), "/ws")
	subscribe := []byte(dialects[0].subscribe(1, benchTopic))
	// Prime the topic so the first client does not pay for it.
	rd := dialReaders(b, url, 1, string(subscribe), false)
	defer rd.close()

	b.ReportAllocs()
	var perClient, goroutines float64
	for range b.N {
		before, g0 := benchkit.MemInUse(), runtime.NumGoroutine()
		conns := make([]net.Conn, 0, n)
		for range n {
			conns = append(conns, rawSubscribe(b, addr, subscribe))
		}
		waitFor2(b, func() bool { return countAttached(sc) == n+1 })
		after, g1 := benchkit.MemInUse(), runtime.NumGoroutine()
		perClient = float64(after-before) / n
		goroutines = float64(g1-g0) / n
		for _, c := range conns {
			_ = c.Close()
		}
		waitFor2(b, func() bool { return len(sc.Status().Clients) == 1 })
	}
	b.ReportMetric(perClient, "bytes/client")
	b.ReportMetric(goroutines, "goroutines/client")
}

// rawSubscribe opens a WebSocket by hand and sends one subscribe frame;
// the acknowledgement is left unread in the kernel.
func rawSubscribe(b *testing.B, addr string, subscribe []byte) net.Conn {
	b.Helper()
	c, err := rawws.Dial(addr, "/ws", subscribe)
	require.NoError(b, err)
	return c
}

// BenchmarkIdleTopicMemory measures what an upstream topic nobody
// publishes on costs the sidecar (its upstream subscription's buffer, its
// pump goroutine, its state; the test exchange in this process counted
// too): 1,000 topics subscribed by one local client.
func BenchmarkIdleTopicMemory(b *testing.B) {
	const n = 1000
	up := exchangetest.NewServer(thalex.Name)
	defer up.Close()
	sc, url := startBenchSidecar(b, up, func(c *sidecar.Config) { c.MaxTopicsPerClient, c.Grace = n, time.Millisecond })
	defer sc.Close()
	topics := make([]string, n)
	for i := range topics {
		topics[i] = fmt.Sprintf("ticker.T%d-PERPETUAL.raw", i)
	}
	channels, _ := json.Marshal(topics)
	subscribe := `{"id":1,"method":"public/subscribe","params":{"channels":` + string(channels) + `}}`
	var perTopic float64
	for range b.N {
		before := benchkit.MemInUse()
		rd := dialReaders(b, url, 1, subscribe, false)
		waitFor2(b, func() bool { return len(sc.Status().Topics) == n })
		perTopic = float64(benchkit.MemInUse()-before) / n
		rd.close()
		waitFor2(b, func() bool { return len(sc.Status().Topics) == 0 })
	}
	b.ReportMetric(perTopic, "bytes/topic")
}

// BenchmarkSubscribeWalk measures a local subscribe's walk through the
// sidecar (ARCHITECTURE.md, "A subscribe's walk") and back: one client
// subscribes and unsubscribes a topic another client holds, so no
// request goes upstream, and waits for each answer. An op is the pair.
func BenchmarkSubscribeWalk(b *testing.B) {
	up := exchangetest.NewServer(thalex.Name)
	defer up.Close()
	sc, url := startBenchSidecar(b, up, nil)
	defer sc.Close()
	holder := dialReaders(b, url, 1, dialects[0].subscribe(1, benchTopic), false)
	defer holder.close()
	waitFor2(b, func() bool { return countAttached(sc) == 1 })
	ws, _, err := websocket.DefaultDialer.Dial(url, nil)
	require.NoError(b, err)
	defer ws.Close()
	sub, unsub := []byte(dialects[0].subscribe(1, benchTopic)), []byte(dialects[0].unsub(2, benchTopic, ""))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		for _, req := range [][]byte{sub, unsub} {
			require.NoError(b, ws.WriteMessage(websocket.TextMessage, req))
			if _, _, err := ws.ReadMessage(); err != nil {
				b.Fatal(err)
			}
		}
	}
}
