package peers

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/centrifugal/centrifuge"
	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/benchkit"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/sidecar"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// topic is the one topic fanned out, on both servers.
const topic = "ticker.BTC-PERPETUAL.raw"

// payload is a Thalex ticker of realistic size (~300 bytes), the same
// bytes on both servers.
var payload = []byte(`{"best_bid_price":64999.5,"best_bid_amount":1.251,"best_ask_price":65000.5,"best_ask_amount":1.231,` +
	`"mark_price":65000,"mark_timestamp":1795331967.39783,"index":64987,"funding_rate":-0.0000752493,` +
	`"volume_24h":65000002,"open_interest":32500000,"last_price":65000.5,"high_24h":65500,"low_24h":64200}`)

// thalexSubscribe subscribes a Thalex client (of the sidecar, or of the
// test exchange itself) to the topic.
var thalexSubscribe = `{"id":1,"method":"public/subscribe","params":{"channels":["` + topic + `"]}}`

// server is one fan-out server under test: where its clients connect,
// what they send to subscribe (each frame answered by one reply frame),
// how to count the deliveries in a frame they read, and how to publish
// one message on the topic.
type server struct {
	url         string
	subscribe   []string
	count       func(frame []byte) int
	publish     func()
	publishData func(data []byte) // centrifuge: node.Publish of data; the sidecar's comes from its upstream
	subscribers func() int        // clients subscribed to the topic
	// queued is the sidecar's delivery delay so far (its receive time
	// to the frames built for its WebSocket clients: the hub's part of
	// the hop, wsfan_sidecar_delivery_delay_seconds), p50 and p99 in µs;
	// nil for the others.
	queued func() (p50, p99 float64)
	close  func()
}

// sidecarServer is a Thalex test exchange and a sidecar serving it.
func sidecarServer(b *testing.B) *server {
	ex := exchangetest.NewServer(thalex.Name)
	srv := sidecarOn(b, ex)
	closeSidecar := srv.close
	srv.close = func() {
		closeSidecar()
		ex.Close()
	}
	return srv
}

// sidecarOn is a sidecar serving the test exchange ex, which the caller
// closes.
func sidecarOn(b *testing.B, ex *exchangetest.Server) *server {
	sc, err := sidecar.New(sidecar.Config{Upstream: ex.URL(), Protocol: thalex.Name, MaxClients: 100_000})
	require.NoError(b, err)
	hs := httptest.NewServer(sc.Handler())
	waitFor(b, sc.Ready)
	return &server{
		url:       "ws" + strings.TrimPrefix(hs.URL, "http") + "/ws",
		subscribe: []string{thalexSubscribe},
		count:     func([]byte) int { return 1 },
		publish:   func() { ex.Publish(topic, payload) },
		subscribers: func() int {
			for _, t := range sc.Status().Topics {
				if t.Topic == topic {
					return t.Refs
				}
			}
			return 0
		},
		queued: func() (p50, p99 float64) {
			for _, d := range sc.Status().Delays {
				if d.Name == "wsfan_sidecar_delivery_delay_seconds" && d.Labels == "transport=websocket" {
					return d.P50 * 1e6, d.P99 * 1e6
				}
			}
			return 0, 0
		},
		close: func() {
			hs.Close()
			sc.Close()
		},
	}
}

// centrifugeServer is a centrifuge Node with its WebSocket transport and
// in-memory broker, letting every client connect and subscribe; clients
// speak its JSON protocol. A frame may carry several pushes, one a line.
func centrifugeServer(b *testing.B) *server {
	node, err := centrifuge.New(centrifuge.Config{LogLevel: centrifuge.LogLevelNone})
	require.NoError(b, err)
	node.OnConnecting(func(context.Context, centrifuge.ConnectEvent) (centrifuge.ConnectReply, error) {
		return centrifuge.ConnectReply{Credentials: &centrifuge.Credentials{UserID: "bench"}}, nil
	})
	node.OnConnect(func(c *centrifuge.Client) {
		c.OnSubscribe(func(_ centrifuge.SubscribeEvent, cb centrifuge.SubscribeCallback) {
			cb(centrifuge.SubscribeReply{}, nil)
		})
	})
	require.NoError(b, node.Run())
	mux := http.NewServeMux()
	mux.Handle("/connection/websocket", centrifuge.NewWebsocketHandler(node, centrifuge.WebsocketConfig{}))
	hs := httptest.NewServer(mux)
	push := []byte(`"push"`)
	return &server{
		url:       "ws" + strings.TrimPrefix(hs.URL, "http") + "/connection/websocket",
		subscribe: []string{`{"id":1,"connect":{}}`, `{"id":2,"subscribe":{"channel":"` + topic + `"}}`},
		count:     func(frame []byte) int { return bytes.Count(frame, push) },
		publish: func() {
			if _, err := node.Publish(topic, payload); err != nil {
				panic(err)
			}
		},
		publishData: func(data []byte) {
			if _, err := node.Publish(topic, data); err != nil {
				panic(err)
			}
		},
		subscribers: func() int { return node.Hub().NumSubscribers(topic) },
		close: func() {
			hs.Close()
			_ = node.Shutdown(context.Background())
		},
	}
}

// readers are n WebSocket clients of srv, subscribed, counting what they
// receive.
type readers struct {
	conns  []*websocket.Conn
	got    atomic.Int64
	frames atomic.Int64 // WebSocket frames read: centrifuge merges pushes into one
	wg     sync.WaitGroup

	// The publisher waits for got to reach want (0: nobody waits); the
	// reader that takes it there clears want and signals reached.
	want    atomic.Int64
	reached chan struct{} // capacity 1
}

func dialReaders(b *testing.B, srv *server, n int) *readers {
	b.Helper()
	r := &readers{reached: make(chan struct{}, 1)}
	d := websocket.Dialer{ReadBufferSize: 16 << 10}
	for range n {
		ws, resp, err := d.Dial(srv.url, nil)
		require.NoError(b, err)
		_ = resp.Body.Close()
		r.conns = append(r.conns, ws)
		for _, frame := range srv.subscribe {
			require.NoError(b, ws.WriteMessage(websocket.TextMessage, []byte(frame)))
			_, _, err := ws.ReadMessage()
			require.NoError(b, err)
		}
	}
	for _, ws := range r.conns {
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			// One buffer a reader, kept: a fresh one a frame (ReadMessage)
			// makes garbage whose collection takes the cores from the
			// server under test, more so for the server sending more frames.
			var frame bytes.Buffer
			for {
				_, rd, err := ws.NextReader()
				if err != nil {
					return
				}
				frame.Reset()
				if _, err := frame.ReadFrom(rd); err != nil {
					return
				}
				r.frames.Add(1)
				got := r.got.Add(int64(srv.count(frame.Bytes())))
				if want := r.want.Load(); want != 0 && got >= want && r.want.CompareAndSwap(want, 0) {
					r.reached <- struct{}{}
				}
			}
		}()
	}
	return r
}

func (r *readers) close() {
	for _, ws := range r.conns {
		_ = ws.Close()
	}
	r.wg.Wait()
}

// pump publishes msgs messages, never more than window ahead of the
// slowest deliveries, and waits until every client has every message.
func pump(b *testing.B, srv *server, r *readers, clients, msgs int) {
	const window = 500
	base := r.got.Load()
	for i := range msgs {
		srv.publish()
		if i%window == window-1 {
			r.wait(b, base+int64((i+1-window)*clients))
		}
	}
	r.wait(b, base+int64(clients*msgs))
}

// wait blocks until the clients have received target messages in all,
// woken by the reader that gets there. (The publisher used to poll with
// runtime.Gosched, whose scheduling rounds took a fifth of the process's
// CPU, counted in cpu-ns/delivery for both servers; a sleep between polls
// lasts far longer than asked on this VM, and the pipeline drains
// meanwhile.)
func (r *readers) wait(b *testing.B, target int64) {
	if r.got.Load() >= target {
		return
	}
	r.want.Store(target)
	if r.got.Load() >= target && r.want.CompareAndSwap(target, 0) {
		return // reached before the readers saw want
	}
	select {
	case <-r.reached:
	case <-time.After(60 * time.Second):
		b.Fatalf("%d of %d deliveries", r.got.Load(), target)
	}
}

// BenchmarkFanOutPeers measures deliveries a second, and the process's
// CPU time a delivery, from one topic to N WebSocket clients in this
// process: through the sidecar (fed by a test exchange over loopback) and
// through centrifuge (fed by node.Publish), in the same run; each round
// runs both, so a busy spell of the machine falls on both.
func BenchmarkFanOutPeers(b *testing.B) {
	for _, n := range []int{100, 1000} {
		for _, impl := range []struct {
			name string
			new  func(*testing.B) *server
		}{{"sidecar", sidecarServer}, {"centrifuge", centrifugeServer}} {
			b.Run(fmt.Sprintf("clients=%d/impl=%s", n, impl.name), func(b *testing.B) {
				srv := impl.new(b)
				defer srv.close()
				r := dialReaders(b, srv, n)
				defer r.close()
				// 300,000 deliveries a round: long enough (about 0.1 s)
				// that filling and draining the pipeline is a small part.
				msgs := max(300, 300_000/n)
				pump(b, srv, r, n, 10) // warm: every client is live
				b.ResetTimer()
				start, cpu0, frames0, writes0 := time.Now(), benchkit.ProcessCPU(), r.frames.Load(), benchkit.WriteCalls()
				for range b.N {
					pump(b, srv, r, n, msgs)
				}
				elapsed, cpu := time.Since(start), benchkit.ProcessCPU()-cpu0
				deliveries := float64(n * msgs * b.N)
				b.ReportMetric(deliveries/elapsed.Seconds(), "deliveries/s")
				b.ReportMetric(float64(cpu.Nanoseconds())/deliveries, "cpu-ns/delivery")
				b.ReportMetric(float64(r.frames.Load()-frames0)/deliveries, "frames/delivery")
				// The process's write calls (the server's, and the test
				// exchange's one a message for the sidecar; the clients
				// write nothing meanwhile): frames sent together count
				// once.
				b.ReportMetric(float64(benchkit.WriteCalls()-writes0)/deliveries, "writes/delivery")
			})
		}
	}
}

// waitFor waits up to 30 s for cond.
func waitFor(b *testing.B, cond func() bool) {
	b.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			b.Fatal("timed out")
		}
		time.Sleep(time.Millisecond)
	}
}
