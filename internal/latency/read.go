package latency

import (
	"math"
	"slices"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// A Reading is one delay histogram's series as a registry holds it now,
// for the sidecar's status page and for tests.
type Reading struct {
	Name   string            `json:"name"`
	Labels map[string]string `json:"labels,omitempty"`
	Count  uint64            `json:"count"`
	Sum    float64           `json:"sum_seconds"`
	// P50 and P99 are quantiles in seconds estimated from the native
	// buckets (within a bucket's width, 9 %), or the classic ones where
	// a histogram has none; 0 with no observation.
	P50 float64 `json:"p50_seconds"`
	P99 float64 `json:"p99_seconds"`
}

// Read gathers g and returns every series of the histograms whose names
// are given, in the order g gathers them.
func Read(g prometheus.Gatherer, names ...string) ([]Reading, error) {
	families, err := g.Gather()
	if err != nil {
		return nil, err
	}
	var out []Reading
	for _, f := range families {
		if f.GetType() != dto.MetricType_HISTOGRAM || !slices.Contains(names, f.GetName()) {
			continue
		}
		for _, m := range f.GetMetric() {
			h := m.GetHistogram()
			r := Reading{Name: f.GetName(), Count: h.GetSampleCount(), Sum: h.GetSampleSum()}
			for _, l := range m.GetLabel() {
				if r.Labels == nil {
					r.Labels = make(map[string]string, len(m.GetLabel()))
				}
				r.Labels[l.GetName()] = l.GetValue()
			}
			bs := nativeBuckets(h)
			if bs == nil {
				bs = classicBuckets(h)
			}
			r.P50, r.P99 = quantile(bs, 0.5), quantile(bs, 0.99)
			out = append(out, r)
		}
	}
	return out, nil
}

// LabelString is r's labels as name=value pairs, sorted by name.
func (r Reading) LabelString() string {
	keys := make([]string, 0, len(r.Labels))
	for k := range r.Labels {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for i, k := range keys {
		keys[i] = k + "=" + r.Labels[k]
	}
	return strings.Join(keys, ",")
}

// bucket is a histogram bucket's range (lo, hi] and its own count.
type bucket struct {
	lo, hi float64
	n      uint64
}

// nativeBuckets are h's native buckets in ascending order (negative ones
// first, then the zero bucket), or nil when h has none. Bucket i of
// schema s spans (b^(i-1), b^i] with b = 2^(2^-s); spans and delta
// counts as the exposition format encodes them.
func nativeBuckets(h *dto.Histogram) []bucket {
	if h.Schema == nil {
		return nil
	}
	base := math.Pow(2, math.Pow(2, -float64(h.GetSchema())))
	side := func(spans []*dto.BucketSpan, deltas []int64, sign float64) []bucket {
		var out []bucket
		var idx int32
		var n int64
		k := 0
		for _, sp := range spans {
			idx += sp.GetOffset()
			for range sp.GetLength() {
				if k < len(deltas) {
					n += deltas[k]
				}
				k++
				lo, hi := math.Pow(base, float64(idx-1)), math.Pow(base, float64(idx))
				if sign < 0 {
					lo, hi = -hi, -lo
				}
				out = append(out, bucket{lo: lo, hi: hi, n: uint64(max(n, 0))})
				idx++
			}
		}
		return out
	}
	neg := side(h.GetNegativeSpan(), h.GetNegativeDelta(), -1)
	slices.Reverse(neg)
	zt := h.GetZeroThreshold()
	out := append(neg, bucket{lo: -zt, hi: zt, n: h.GetZeroCount()})
	return append(out, side(h.GetPositiveSpan(), h.GetPositiveDelta(), 1)...)
}

// classicBuckets are h's classic buckets, made non-cumulative; the
// first starts at 0 (a negative observation counts in it as if it were
// 0), and the observations past the last bound are read as that bound.
func classicBuckets(h *dto.Histogram) []bucket {
	var out []bucket
	var lo float64
	var below uint64
	for _, b := range h.GetBucket() {
		hi := b.GetUpperBound()
		n := b.GetCumulativeCount() - below
		below = b.GetCumulativeCount()
		if len(out) == 0 {
			lo = min(0, hi)
		}
		out = append(out, bucket{lo: lo, hi: hi, n: n})
		lo = hi
	}
	if rest := h.GetSampleCount() - below; rest > 0 { // past the last bound: read as it
		out = append(out, bucket{lo: lo, hi: lo, n: rest})
	}
	return out
}

// quantile estimates quantile q of bs by linear interpolation within
// the bucket holding it; 0 for no observation.
func quantile(bs []bucket, q float64) float64 {
	var total uint64
	for _, b := range bs {
		total += b.n
	}
	if total == 0 {
		return 0
	}
	rank := q * float64(total)
	var cum float64
	for _, b := range bs {
		if b.n == 0 {
			continue
		}
		if cum+float64(b.n) >= rank {
			return b.lo + (b.hi-b.lo)*(rank-cum)/float64(b.n)
		}
		cum += float64(b.n)
	}
	return bs[len(bs)-1].hi
}
