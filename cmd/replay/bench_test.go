package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
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
	require.Equal(b, n, loaded.count)
	return loaded, frames
}

// BenchmarkReplayMemory plays a recording of 1,000,000 ticker frames
// (about 110 MB of them) at -speed max to a raw gorilla reader, and
// reports the heap in use once it is loaded and the most it reached
// while playing (sampled every 10 ms), in MiB (a GC first each time):
// a replay reads its window from disk as it plays.
func BenchmarkReplayMemory(b *testing.B) {
	const n = 1_000_000
	loaded, _ := recordedFeed(b, n)
	heap := func() float64 {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return float64(ms.HeapInuse) / (1 << 20)
	}
	for range b.N {
		runtime.GC()
		atLoad := heap()
		srv, ws := subscribedReader(b, loaded, "ticker.BTC-PERPETUAL.raw")
		done := make(chan struct{})
		var most float64
		var wg sync.WaitGroup
		wg.Add(2)
		go func() {
			defer wg.Done()
			tick := time.NewTicker(10 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-tick.C:
					most = max(most, heap())
				case <-done:
					return
				}
			}
		}()
		go func() {
			defer wg.Done()
			_, _ = loaded.play(context.Background(), srv, 0, 0)
		}()
		readN(b, ws, n)
		close(done)
		wg.Wait()
		_ = ws.Close()
		srv.Close()
		b.ReportMetric(atLoad, "heap-MiB-loaded")
		b.ReportMetric(most, "heap-MiB-playing")
	}
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
			srv, ws := subscribedReader(b, loaded, "ticker.BTC-PERPETUAL.raw")
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

// pacingFrames is how many frames BenchmarkReplayPacing replays an op.
const pacingFrames = 10_000

// pacingOffsets are pacingFrames recorded offsets at irregular gaps (0
// to 2 ms, and a burst 0-50 µs apart every 100 frames), 10 s in all.
func pacingOffsets() []time.Duration {
	rnd := rand.New(rand.NewPCG(1, 2))
	out := make([]time.Duration, pacingFrames)
	var at time.Duration
	for i := range out {
		if i%100 >= 95 {
			at += time.Duration(rnd.Int64N(int64(50 * time.Microsecond)))
		} else {
			at += time.Duration(rnd.Int64N(int64(2 * time.Millisecond)))
		}
		out[i] = at
	}
	return out
}

// reportErrors reports the p50, p99, p99.9 and max of errs, in µs.
func reportErrors(b *testing.B, errs []time.Duration) {
	slices.Sort(errs)
	q := func(p float64) float64 { return float64(errs[int(p*float64(len(errs)-1))].Microseconds()) }
	b.ReportMetric(q(0.5), "p50-µs")
	b.ReportMetric(q(0.99), "p99-µs")
	b.ReportMetric(q(0.999), "p99.9-µs")
	b.ReportMetric(q(1), "max-µs")
}

// BenchmarkPacer waits for the deadlines of 10,000 frames recorded at
// irregular gaps (pacingOffsets) and reports how late each wait returns
// (p50, p99, p99.9, max, in µs): the replay's own pacing error, without
// the hop to a reader. mode=timer is a timer to each deadline (the
// player before pace.go), mode=pacer the pacer (nanosleep to a margin
// before the deadline, a spin the rest).
func BenchmarkPacer(b *testing.B) {
	offsets := pacingOffsets()
	b.Run("mode=timer", func(b *testing.B) {
		var errs []time.Duration
		for range b.N {
			start := time.Now()
			timer := time.NewTimer(time.Hour)
			for _, at := range offsets {
				due := start.Add(at)
				if wait := time.Until(due); wait > 0 {
					timer.Reset(wait)
					<-timer.C
				}
				errs = append(errs, time.Since(due))
			}
			timer.Stop()
		}
		reportErrors(b, errs)
	})
	b.Run("mode=pacer", func(b *testing.B) {
		var errs []time.Duration
		for range b.N {
			p := newPacer(1)
			for _, at := range offsets {
				require.NoError(b, p.wait(context.Background(), at))
				errs = append(errs, time.Since(p.due(at)).Abs())
			}
		}
		reportErrors(b, errs)
	})
}

// BenchmarkReplayPacing replays 10,000 frames recorded at irregular
// gaps (pacingOffsets) at -speed 1 to a raw gorilla reader, and reports
// how far each frame's arrival is from its recorded offset after the
// replay clock's start (p50, p99, p99.9, max, in µs): the replay's pacing
// error plus the hop to the reader, in the same process. The start is
// taken as the median of the frames' arrivals less their offsets (the
// first frame's arrival would count its own lateness against every
// other).
func BenchmarkReplayPacing(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "rec")
	rec, err := record.New(dir, thalex.Protocol(), record.Options{Queue: 1 << 30})
	require.NoError(b, err)
	c := client.ConnInfo{Client: 1, Conn: 1}
	t0 := time.Now()
	rec.FrameWritten(c, []byte(`{"jsonrpc":"2.0","id":1,"method":"public/subscribe","params":{"channels":["a.b"]}}`), t0)
	for i, at := range pacingOffsets() {
		rec.FrameRead(c, fmt.Appendf(nil, `{"channel_name":"a.b","notification":%d}`, i), t0.Add(at))
	}
	require.NoError(b, rec.Close())
	loaded, err := load(dir, record.Window{})
	require.NoError(b, err)
	notes := played(b, loaded)
	require.Len(b, notes, pacingFrames)
	var errs []time.Duration
	for range b.N {
		srv, ws := subscribedReader(b, loaded, "a.b")
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		go func() { _, _ = loaded.play(ctx, srv, 1, 0) }()
		offsets := make([]time.Duration, pacingFrames) // each frame's arrival less its recorded offset
		for i := range pacingFrames {
			_, r, err := ws.NextReader() // read without allocating: the collector is the replay's
			require.NoError(b, err)
			_, err = io.Copy(io.Discard, r)
			require.NoError(b, err)
			offsets[i] = time.Since(t0) - notes[i].at
		}
		// The clock's start is the offsets' median: a frame's error is
		// how far its offset is from it.
		start := slices.Clone(offsets)
		slices.Sort(start)
		for _, o := range offsets {
			errs = append(errs, (o - start[len(start)/2]).Abs())
		}
		_ = ws.Close()
		srv.Close()
		cancel()
	}
	reportErrors(b, errs)
}

// subscribedReader starts a test exchange for loaded's topics and a raw
// gorilla reader subscribed there to channel, its acknowledgement read.
func subscribedReader(b *testing.B, loaded *recording, channel string) (*exchangetest.Server, *websocket.Conn) {
	b.Helper()
	srv := exchangetest.NewServer(thalex.Name, exchangetest.WithTopics(loaded.topics...))
	ws, _, err := websocket.DefaultDialer.Dial(srv.URL(), nil)
	require.NoError(b, err)
	require.NoError(b, ws.WriteMessage(websocket.TextMessage, []byte(`{"jsonrpc":"2.0","id":1,"method":"public/subscribe","params":{"channels":["`+channel+`"]}}`)))
	_, _, err = ws.ReadMessage() // the acknowledgement
	require.NoError(b, err)
	return srv, ws
}
