package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/record"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// benchFrames is how many frames a replay benchmark serves an op.
const benchFrames = 100_000

// recordedFeed writes a recording of n ticker frames, 1 µs apart.
func recordedFeed(b *testing.B, n int) (*recording, [][]byte) {
	b.Helper()
	dir := filepath.Join(b.TempDir(), "rec")
	rec, err := record.New(dir, thalex.Protocol(), record.Options{Queue: 1 << 30})
	require.NoError(b, err)
	c := client.ConnInfo{Client: 1, Conn: 1}
	t0 := time.Now()
	rec.FrameWritten(c, []byte(`{"jsonrpc":"2.0","id":1,"method":"public/subscribe","params":{"channels":["ticker.BTC-PERPETUAL.raw"]}}`), t0)
	frames := make([][]byte, n)
	for i := range frames {
		frames[i] = fmt.Appendf(nil, `{"channel_name":"ticker.BTC-PERPETUAL.raw","notification":{"mark_price":%d.5,"index":%d}}`, 68000+i%100, i)
		rec.FrameRead(c, frames[i], t0.Add(time.Duration(i)*time.Microsecond))
		if i%10_000 == 9_999 {
			for rec.Stats().Recorded < uint64(i) { // a burst past the queue would be dropped
				time.Sleep(time.Millisecond)
			}
		}
	}
	require.NoError(b, rec.Close())
	loaded, err := load(dir, record.Window{})
	require.NoError(b, err)
	require.Len(b, loaded.notes, n)
	return loaded, frames
}

// readN reads n messages from ws, discarding them.
func readN(b *testing.B, ws *websocket.Conn, n int) {
	for range n {
		if _, _, err := ws.NextReader(); err != nil {
			b.Error(err)
			return
		}
	}
}

// BenchmarkReplay serves 100,000 recorded frames at -speed max to one
// raw gorilla reader (impl=replay), beside a plain gorilla server
// writing the same frames to the same reader (impl=gorilla): frames/s of
// each, in the same run.
func BenchmarkReplay(b *testing.B) {
	loaded, frames := recordedFeed(b, benchFrames)
	b.Run("impl=replay", func(b *testing.B) {
		for range b.N {
			srv := exchangetest.NewServer(thalex.Name, exchangetest.WithTopics(loaded.topics...))
			ws, _, err := websocket.DefaultDialer.Dial(srv.URL(), nil)
			require.NoError(b, err)
			require.NoError(b, ws.WriteMessage(websocket.TextMessage, []byte(`{"jsonrpc":"2.0","id":1,"method":"public/subscribe","params":{"channels":["ticker.BTC-PERPETUAL.raw"]}}`)))
			_, _, err = ws.ReadMessage() // the acknowledgement
			require.NoError(b, err)
			start := time.Now()
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, _ = loaded.play(context.Background(), srv, 0, 0)
			}()
			readN(b, ws, benchFrames)
			b.ReportMetric(benchFrames/time.Since(start).Seconds(), "frames/s")
			wg.Wait()
			_ = ws.Close()
			srv.Close()
		}
	})
	b.Run("impl=gorilla", func(b *testing.B) {
		for range b.N {
			upg := websocket.Upgrader{}
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				c, err := upg.Upgrade(w, r, nil)
				if err != nil {
					return
				}
				defer c.Close()
				for _, f := range frames {
					if c.WriteMessage(websocket.TextMessage, f) != nil {
						return
					}
				}
				_, _, _ = c.ReadMessage() // until the reader leaves
			}))
			ws, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(hs.URL, "http"), nil)
			require.NoError(b, err)
			start := time.Now()
			readN(b, ws, benchFrames)
			b.ReportMetric(benchFrames/time.Since(start).Seconds(), "frames/s")
			_ = ws.Close()
			hs.Close()
		}
	})
}

// BenchmarkReplayPacing replays 200 frames recorded 5 ms apart at
// -speed 1 into the SDK and reports how far each frame's arrival is from
// its recorded offset (p50, p99, max), in µs.
func BenchmarkReplayPacing(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "rec")
	rec, err := record.New(dir, thalex.Protocol(), record.Options{})
	require.NoError(b, err)
	c := client.ConnInfo{Client: 1, Conn: 1}
	t0 := time.Now()
	rec.FrameWritten(c, []byte(`{"jsonrpc":"2.0","id":1,"method":"public/subscribe","params":{"channels":["a.b"]}}`), t0)
	const n = 200
	for i := range n {
		rec.FrameRead(c, fmt.Appendf(nil, `{"channel_name":"a.b","notification":%d}`, i), t0.Add(time.Duration(i)*5*time.Millisecond))
	}
	require.NoError(b, rec.Close())
	loaded, err := load(dir, record.Window{})
	require.NoError(b, err)
	var errs []time.Duration
	for range b.N {
		srv := exchangetest.NewServer(thalex.Name, exchangetest.WithTopics(loaded.topics...))
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		cl, err := client.Dial(ctx, srv.URL(), client.WithProtocol(thalex.Protocol(thalex.WithNotices(false))))
		require.NoError(b, err)
		sub, err := cl.Subscribe(ctx, []string{"a.b"})
		require.NoError(b, err)
		start := time.Now()
		go func() { _, _ = loaded.play(ctx, srv, 1, 0) }()
		for i := range n {
			m := <-sub.C()
			errs = append(errs, (m.RecvTime.Sub(start) - loaded.notes[i].at).Abs())
		}
		_ = cl.Close()
		srv.Close()
		cancel()
	}
	slices.Sort(errs)
	q := func(p float64) float64 { return float64(errs[int(p*float64(len(errs)-1))].Microseconds()) }
	b.ReportMetric(q(0.5), "p50-µs")
	b.ReportMetric(q(0.99), "p99-µs")
	b.ReportMetric(q(1), "max-µs")
}
