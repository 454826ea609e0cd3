package latency

import (
	"fmt"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"
)

// TestReadQuantiles: Read gives a histogram's count, sum and quantiles
// within 10 % from its native buckets, negative delays included and
// counted as skew, and from its classic buckets where it has no native
// ones.
func TestReadQuantiles(t *testing.T) {
	reg := prometheus.NewRegistry()
	f := NewFamilies(Opts("test_delay_seconds", "h", nil))
	skew := prometheus.NewCounter(prometheus.CounterOpts{Name: SkewName, Help: SkewHelp})
	classicOpts := Opts("test_classic_seconds", "h", nil)
	classicOpts.NativeHistogramBucketFactor = 0
	classic := prometheus.NewHistogram(classicOpts)
	reg.MustRegister(f, skew, classic)

	book := f.For("book")
	for i := range 100 {
		ns := int64(50e6) // 50 ms
		if i == 99 {
			ns = 2e9
		}
		Observe(book, skew, ns)
		classic.Observe(float64(ns) / 1e9)
	}
	ahead := f.For("ticker")
	for range 10 {
		Observe(ahead, skew, -50e6)
	}

	rs, err := Read(reg, "test_delay_seconds", "test_classic_seconds")
	require.NoError(t, err)
	require.Len(t, rs, 3)
	got := map[string]Reading{}
	for _, r := range rs {
		got[r.Name+"/"+r.LabelString()] = r
	}
	b := got["test_delay_seconds/family=book"]
	require.EqualValues(t, 100, b.Count)
	require.InDelta(t, 99*0.05+2, b.Sum, 1e-9)
	require.InEpsilon(t, 0.05, b.P50, 0.1)
	require.InEpsilon(t, 0.05, b.P99, 0.1, "99 of 100 at 50 ms")
	a := got["test_delay_seconds/family=ticker"]
	require.InDelta(t, -0.5, a.Sum, 1e-9, "negative delays kept as they are")
	require.InEpsilon(t, -0.05, a.P50, 0.1)
	require.Equal(t, 10.0, testCounter(t, skew))
	c := got["test_classic_seconds/"]
	require.EqualValues(t, 100, c.Count)
	require.True(t, c.P50 > 0.025 && c.P50 <= 0.05, "classic p50 %v in its bucket (25 ms, 50 ms]", c.P50)
}

// TestFamiliesBounded: past MaxFamilies, families share "other".
func TestFamiliesBounded(t *testing.T) {
	f := NewFamilies(Opts("test_delay_seconds", "h", nil))
	for i := range MaxFamilies + 10 {
		f.For(fmt.Sprint("f", i)).Observe(1)
	}
	require.Len(t, f.seen, MaxFamilies+1)
	require.Same(t, f.For("f999"), f.For("other"))
}

func testCounter(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	ch := make(chan prometheus.Metric, 1)
	c.Collect(ch)
	var m dto.Metric
	require.NoError(t, (<-ch).Write(&m))
	return m.GetCounter().GetValue()
}
