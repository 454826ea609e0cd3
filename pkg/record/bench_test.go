package record_test

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/record"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// BenchmarkRecorderTap is what recording costs a connection's reader: a
// tapped frame copied and queued (the writer goroutine classifies,
// compresses and writes it beside). ns/op is the reader's share; the
// metrics say what the whole recording took a frame, wall time over
// frames, with Close's flush, and how large it came out on disk.
func BenchmarkRecorderTap(b *testing.B) {
	frames := make([][]byte, 256)
	for i := range frames {
		frames[i] = fmt.Appendf(nil, `{"channel_name":"ticker.BTC-PERPETUAL.raw","notification":{"mark_price":%d.%d,"index":%d,"best_bid_price":%d,"best_ask_price":%d}}`,
			68000+i%50, i%10, 68000+i%40, 67999+i%50, 68001+i%50)
	}
	dir := filepath.Join(b.TempDir(), "rec")
	r, err := record.New(dir, thalex.Protocol(), record.Options{})
	if err != nil {
		b.Fatal(err)
	}
	c := client.ConnInfo{Client: 1, Conn: 1}
	b.ReportAllocs()
	start := time.Now()
	b.ResetTimer()
	for i := range b.N {
		r.FrameRead(c, frames[i%len(frames)], time.Now())
	}
	b.StopTimer()
	if err := r.Close(); err != nil {
		b.Fatal(err)
	}
	st := r.Stats()
	b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(b.N), "ns/recorded")
	b.ReportMetric(float64(st.Dropped), "dropped")
	m, err := record.ReadManifest(dir)
	if err == nil {
		var raw, stored int64
		for _, s := range m.Segments {
			raw += s.Raw
			stored += s.Bytes
		}
		if raw > 0 {
			b.ReportMetric(float64(stored)/float64(raw), "stored/raw")
		}
	}
}

// BenchmarkRecorderLongRun records an hour of a ticker in simulated time
// (1,000 frames a second of random prices, a reconnect every 10
// seconds, segments of 8 MiB, 32 MiB kept) as fast as the writer takes
// it, and reports the heap in use once the Recorder started, after the
// first 10 minutes and at the end, in MiB (a GC first each time): a
// recording's memory does not grow with its length.
func BenchmarkRecorderLongRun(b *testing.B) {
	const perSecond, seconds = 1_000, 3_600
	rnd := rand.New(rand.NewPCG(1, 2))
	var frame []byte
	heap := func() float64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return float64(ms.HeapInuse) / (1 << 20)
	}
	for range b.N {
		dir := filepath.Join(b.TempDir(), "rec")
		// A flush every 20 ms: the writer takes the queue's tail at its
		// tick, and each simulated second waits for it.
		r, err := record.New(dir, thalex.Protocol(), record.Options{SegmentBytes: 8 << 20, MaxBytes: 32 << 20, Flush: 20 * time.Millisecond})
		if err != nil {
			b.Fatal(err)
		}
		t0 := time.Date(2026, 11, 27, 18, 0, 0, 0, time.UTC)
		start := heap()
		var early float64
		for s := range seconds {
			c := client.ConnInfo{Client: 1, Conn: uint64(s/10 + 1)}
			for i := range perSecond {
				n := s*perSecond + i
				frame = fmt.Appendf(frame[:0], `{"channel_name":"ticker.BTC-PERPETUAL.raw","notification":{"mark_price":%d.%d,"index":%d,"best_bid_price":%d,"best_ask_price":%d}}`,
					68000+rnd.IntN(500), rnd.IntN(10), n, 67990+rnd.IntN(500), 68010+rnd.IntN(500))
				r.FrameRead(c, frame, t0.Add(time.Duration(s)*time.Second+time.Duration(i)*time.Millisecond))
			}
			for want := uint64((s + 1) * perSecond); r.Stats().Recorded+r.Stats().Dropped < want; {
				time.Sleep(100 * time.Microsecond) // the writer takes the second: no drops
			}
			if s == 599 {
				early = heap()
			}
		}
		late := heap()
		if err := r.Close(); err != nil {
			b.Fatal(err)
		}
		st := r.Stats()
		b.ReportMetric(start, "heap-MiB-start")
		b.ReportMetric(early, "heap-MiB-10min")
		b.ReportMetric(late, "heap-MiB-60min")
		b.ReportMetric(float64(st.Dropped), "dropped")
		b.ReportMetric(float64(st.Segments), "segments")
	}
}
