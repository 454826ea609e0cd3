package bench

import (
	"context"
	"encoding/json"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/rpc"
	"github.com/gorilla/websocket"

	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/deribit"
	"github.com/wsfan/wsfan/pkg/ethereal"
	"github.com/wsfan/wsfan/pkg/ethereum"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// setupTimeout bounds every setup step (dial, subscribe, waiting for the
// server), so a broken benchmark fails instead of hanging.
const setupTimeout = 10 * time.Second

func setupCtx(b *testing.B) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
	b.Cleanup(cancel)
	return ctx
}

// rpcServer starts an Ethereum-dialect exchangetest server answering
// bench_payload ["<size>"] with Payload(size) and eth_getLogs
// [{"n":N}] with Logs(N). Both answers are built before the server starts,
// so a handler only looks them up. The server is closed when b ends.
func rpcServer(b *testing.B) *exchangetest.Server {
	bySize := map[string]json.RawMessage{}
	for _, p := range PayloadSizes {
		bySize[`["`+p.Name+`"]`] = Payload(p.Size)
	}
	srv := exchangetest.NewServer(ethereum.Name)
	b.Cleanup(srv.Close)
	srv.Handle("bench_payload", func(params json.RawMessage) (any, *protocol.Error) {
		if p, ok := bySize[string(params)]; ok {
			return p, nil
		}
		return nil, &protocol.Error{Code: -32602, Message: "unknown size " + string(params)}
	})
	srv.Handle("eth_getLogs", func(params json.RawMessage) (any, *protocol.Error) {
		var ps []struct{ N int }
		if json.Unmarshal(params, &ps) != nil || len(ps) != 1 || ps[0].N > 10000 {
			return nil, &protocol.Error{Code: -32602, Message: "want [{\"n\":N}]"}
		}
		return json.RawMessage(Logs(ps[0].N)), nil
	})
	return srv
}

// dialWsfan connects a wsfan client to srv and closes it when b ends.
func dialWsfan(b *testing.B, srv *exchangetest.Server, opts ...client.Option) *client.Client {
	var p protocol.Protocol
	switch srv.Dialect() {
	case thalex.Name:
		p = thalex.Protocol()
	case deribit.Name:
		p = deribit.Protocol()
	case ethereum.Name:
		p = ethereum.Protocol()
	default:
		p = ethereal.Protocol()
	}
	c, err := client.Dial(setupCtx(b), srv.URL(), append([]client.Option{client.WithProtocol(p)}, opts...)...)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = c.Close() })
	return c
}

// dialGeth connects go-ethereum's rpc client to srv and closes it when b
// ends.
func dialGeth(b *testing.B, srv *exchangetest.Server) *rpc.Client {
	c, err := rpc.DialContext(setupCtx(b), srv.URL())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.Close)
	return c
}

// dialGorilla opens a raw gorilla connection to srv with default buffers
// and closes it when b ends.
func dialGorilla(b *testing.B, srv *exchangetest.Server) *websocket.Conn {
	ws, _, err := websocket.DefaultDialer.DialContext(setupCtx(b), srv.URL(), nil)
	if err != nil {
		b.Fatal(err)
	}
	ws.SetReadLimit(64 << 20)
	b.Cleanup(func() { _ = ws.Close() })
	return ws
}

// gorillaCall writes one pre-encoded request and reads the next message:
// the floor under any client on this server.
func gorillaCall(ws *websocket.Conn, req []byte) ([]byte, error) {
	if err := ws.WriteMessage(websocket.TextMessage, req); err != nil {
		return nil, err
	}
	_, msg, err := ws.ReadMessage()
	return msg, err
}

// ethRequest encodes a JSON-RPC request as every client here sends it.
func ethRequest(id uint64, method, params string) []byte {
	return []byte(`{"jsonrpc":"2.0","id":` + strconv.FormatUint(id, 10) + `,"method":"` + method + `","params":` + params + `}`)
}

// runSequential times b.N calls of call one after another and reports
// req/s, latency percentiles and this process's CPU time and context
// switches per call (see usageProbe).
func runSequential(b *testing.B, call func() error) {
	lat := NewLatencies(b.N)
	b.ReportAllocs()
	self := startUsage(os.Getpid(), "")
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		if err := call(); err != nil {
			b.Fatal(err)
		}
		lat.Add(time.Since(start))
	}
	b.StopTimer()
	self.report(b, b.N)
	ReportRate(b, b.N, "req/s")
	lat.Report(b)
}

// runConcurrent times b.N calls of call made by callers goroutines sharing
// one client, and reports what runSequential reports.
func runConcurrent(b *testing.B, callers int, call func() error) {
	var (
		next   atomic.Int64
		wg     sync.WaitGroup
		mu     sync.Mutex
		all    = NewLatencies(b.N)
		failed atomic.Pointer[error]
	)
	b.ReportAllocs()
	self := startUsage(os.Getpid(), "")
	b.ResetTimer()
	for range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lat := NewLatencies(b.N/callers + 1)
			for next.Add(1) <= int64(b.N) {
				start := time.Now()
				if err := call(); err != nil {
					failed.Store(&err)
					return
				}
				lat.Add(time.Since(start))
			}
			mu.Lock()
			all.Merge(lat)
			mu.Unlock()
		}()
	}
	wg.Wait()
	b.StopTimer()
	if err := failed.Load(); err != nil {
		b.Fatal(*err)
	}
	self.report(b, b.N)
	ReportRate(b, b.N, "req/s")
	all.Report(b)
}

// stream times the delivery of n notifications: publish runs on its own
// goroutine and is called n times, receive is called n times on the
// benchmark goroutine with i counting from 1. At most window notifications are in flight, so no
// client's queue can overflow and every implementation sees the same
// backlog; the server's own queue applies backpressure beyond that.
func stream(b *testing.B, n int, publish func(), receive func(i int)) {
	const window = 4096
	var (
		received atomic.Int64
		wake     = make(chan struct{}, 1)
		stop     = make(chan struct{}) // closed when receiving fails
		done     = make(chan struct{})
	)
	defer close(stop)
	b.ResetTimer()
	go func() {
		defer close(done)
		for i := range n {
			for int64(i)-received.Load() >= window {
				select {
				case <-wake:
				case <-stop:
					return
				}
			}
			publish()
		}
	}()
	for i := 1; i <= n; i++ {
		receive(i)
		if i%256 == 0 {
			received.Store(int64(i))
			select {
			case wake <- struct{}{}:
			default:
			}
		}
	}
	b.StopTimer()
	<-done
	ReportRate(b, n, "msg/s")
}

// nowMono and sinceMono time one operation.
func nowMono() time.Time                  { return time.Now() }
func sinceMono(t time.Time) time.Duration { return time.Since(t) }
