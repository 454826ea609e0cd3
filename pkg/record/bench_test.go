package record_test

import (
	"fmt"
	"path/filepath"
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
