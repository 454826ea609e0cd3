package bench

import (
	"slices"
	"testing"
	"time"
)

// Latencies records the duration of every operation of a benchmark run and
// reports percentiles as custom metrics, the way the Brane report gives
// p50/p90/p99/p99.9. It is not safe for concurrent use: give each
// goroutine its own and Merge them.
type Latencies struct {
	d []time.Duration
}

// NewLatencies returns a recorder with room for n samples.
func NewLatencies(n int) *Latencies {
	return &Latencies{d: make([]time.Duration, 0, n)}
}

// Add records one sample.
func (l *Latencies) Add(d time.Duration) { l.d = append(l.d, d) }

// Merge adds every sample of o.
func (l *Latencies) Merge(o *Latencies) { l.d = append(l.d, o.d...) }

// Len returns the number of samples.
func (l *Latencies) Len() int { return len(l.d) }

// Percentile returns the p-th percentile (0 < p <= 100) by the
// nearest-rank method, or 0 without samples. It sorts the samples.
func (l *Latencies) Percentile(p float64) time.Duration {
	if len(l.d) == 0 {
		return 0
	}
	slices.Sort(l.d)
	rank := int(p/100*float64(len(l.d))+0.999999) - 1
	return l.d[min(max(rank, 0), len(l.d)-1)]
}

// percentiles are the ones Report prints, with their metric names.
var percentiles = []struct {
	p    float64
	unit string
}{
	{50, "p50-µs"}, {90, "p90-µs"}, {99, "p99-µs"}, {99.9, "p99.9-µs"},
}

// Report adds p50, p90, p99 and p99.9 in microseconds to b's results. With
// fewer than 1000 samples p99.9 is the maximum.
func (l *Latencies) Report(b *testing.B) {
	if len(l.d) == 0 {
		return
	}
	for _, p := range percentiles {
		b.ReportMetric(float64(l.Percentile(p.p))/float64(time.Microsecond), p.unit)
	}
}

// ReportRate adds ops per second over the benchmark's timed run as a custom
// metric named unit ("req/s", "msg/s").
func ReportRate(b *testing.B, ops int, unit string) {
	if s := b.Elapsed().Seconds(); s > 0 {
		b.ReportMetric(float64(ops)/s, unit)
	}
}
