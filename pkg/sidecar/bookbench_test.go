package sidecar_test

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/benchkit"
	"github.com/wsfan/wsfan/internal/sidecartest"
	"github.com/wsfan/wsfan/pkg/deribit"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/sidecar"
)

const (
	benchBook          = "book.BTC-PERPETUAL.100ms"
	benchBookSubscribe = `{"jsonrpc":"2.0","id":1,"method":"public/subscribe","params":{"channels":["` + benchBook + `"]}}`
)

// bookBench is a Deribit test exchange publishing a book every 10 ms and
// a sidecar serving it, which already holds the book (a first program
// keeps it subscribed).
type bookBench struct {
	ex  *exchangetest.Server
	url string // the sidecar's http://127.0.0.1:PORT
}

func newBookBench(b *testing.B) *bookBench {
	b.Helper()
	ex := exchangetest.NewServer(deribit.Name)
	b.Cleanup(ex.Close)
	ex.StartFeed(exchangetest.FeedOptions{Instruments: []string{"BTC-PERPETUAL"}, Interval: 10 * time.Millisecond})
	served := sidecartest.Serve(b, sidecar.Config{Upstream: ex.URL(), Protocol: deribit.Name, Grace: time.Minute})
	waitFor2(b, served.Server.Ready)
	bb := &bookBench{ex: ex, url: "http://" + served.Addr}
	holder := bb.subscribe(b, "ws"+strings.TrimPrefix(bb.url, "http")+"/ws")
	b.Cleanup(func() { _ = holder.Close() })
	return bb
}

// subscribe dials url, subscribes the book and reads up to its first
// notification: the snapshot.
func (bb *bookBench) subscribe(b *testing.B, url string) *websocket.Conn {
	ws, _, err := websocket.DefaultDialer.Dial(url, nil)
	require.NoError(b, err)
	require.NoError(b, ws.WriteMessage(websocket.TextMessage, []byte(benchBookSubscribe)))
	for {
		_, frame, err := ws.ReadMessage()
		require.NoError(b, err)
		if strings.Contains(string(frame), `"method":"subscription"`) {
			require.Contains(b, string(frame), `"type":"snapshot"`, "a book's first message is its snapshot")
			return ws
		}
	}
}

// BenchmarkLateJoinerSnapshot measures a program's wait, from its
// subscribe to its book's snapshot, when it subscribes late: through the
// sidecar, which answers from its own book, against the exchange itself
// (the test exchange, in this process), in the same run. The dial is not
// timed.
func BenchmarkLateJoinerSnapshot(b *testing.B) {
	bb := newBookBench(b)
	for _, impl := range []struct{ name, url string }{
		{"impl=sidecar", "ws" + strings.TrimPrefix(bb.url, "http") + "/ws"},
		{"impl=exchange", bb.ex.URL()},
	} {
		b.Run(impl.name, func(b *testing.B) {
			for range b.N {
				b.StopTimer()
				ws, _, err := websocket.DefaultDialer.Dial(impl.url, nil)
				require.NoError(b, err)
				b.StartTimer()
				require.NoError(b, ws.WriteMessage(websocket.TextMessage, []byte(benchBookSubscribe)))
				for {
					_, frame, err := ws.ReadMessage()
					require.NoError(b, err)
					if strings.Contains(string(frame), `"type":"snapshot"`) {
						break
					}
				}
				b.StopTimer()
				_ = ws.Close()
				b.StartTimer()
			}
		})
	}
}

// BenchmarkBookStream1000 holds 1,000 /v1/book/stream clients at 10
// books a second each on one sidecar for a second an iteration, and
// reports the process's CPU time a second (the sidecar, the exchange and
// the readers: an upper bound on the sidecar's) and the bytes a second
// the clients received.
func BenchmarkBookStream1000(b *testing.B) {
	const clients = 1000
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err == nil && lim.Cur < 3*clients {
		b.Skipf("the open-file limit (%d) is too low for %d clients and their server side", lim.Cur, clients)
	}
	bb := newBookBench(b)
	ctx, cancel := context.WithCancel(context.Background())
	var received atomic.Int64
	var wg sync.WaitGroup
	ready := make(chan struct{}, clients)
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, bb.url+"/v1/book/stream?topic="+benchBook+"&hz=10", nil)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				ready <- struct{}{}
				return
			}
			defer resp.Body.Close()
			br := bufio.NewReader(resp.Body)
			first := true
			for {
				line, err := br.ReadSlice('\n')
				if err != nil {
					return
				}
				received.Add(int64(len(line)))
				if first && strings.HasPrefix(string(line), "data: ") {
					first = false
					ready <- struct{}{}
				}
			}
		}()
	}
	for range clients {
		<-ready
	}
	b.ResetTimer()
	var cpu time.Duration
	var bytes int64
	for range b.N {
		before, from := benchkit.ProcessCPU(), received.Load()
		time.Sleep(time.Second)
		cpu += benchkit.ProcessCPU() - before
		bytes += received.Load() - from
	}
	b.StopTimer()
	b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/s")
	b.ReportMetric(float64(bytes)/float64(b.N), "bytes/s")
	cancel()
	wg.Wait()
}
