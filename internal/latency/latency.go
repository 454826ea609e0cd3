// Package latency holds wsfan's delay histograms, which the SDK
// (pkg/client, wsfan_upstream_delay_seconds) and the sidecar
// (pkg/sidecar, wsfan_sidecar_delivery_delay_seconds and the NATS hop's)
// build alike: each a Prometheus native histogram with classic buckets
// beside it, for servers that do not read native ones, and the one
// counter of stamps found in the future, wsfan_clock_skew_total.
//
// A delay is a difference of two wall clocks (Unix nanoseconds), often
// of two hosts, so it may be negative: a stamp later than the time it is
// compared with. It is observed as it is, never clamped, and counted as
// skew; the message it belongs to goes on like any other.
package latency

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// Buckets are the classic buckets, in seconds: 100 µs to 10 s.
var Buckets = []float64{100e-6, 250e-6, 500e-6, 1e-3, 2.5e-3, 5e-3, 10e-3, 25e-3, 50e-3, 100e-3, 250e-3, 500e-3, 1, 2.5, 5, 10}

// Opts are the options of a delay histogram: native buckets growing by
// at most 10 % (a quantile read within a bucket's width), at most 160 of them (the
// resolution halves past that), and the classic Buckets.
func Opts(name, help string, constLabels prometheus.Labels) prometheus.HistogramOpts {
	return prometheus.HistogramOpts{
		Name:                           name,
		Help:                           help,
		ConstLabels:                    constLabels,
		Buckets:                        Buckets,
		NativeHistogramBucketFactor:    1.1,
		NativeHistogramMaxBucketNumber: 160,
	}
}

// Observe records a delay of ns nanoseconds in o, and counts it in skew
// when it is negative (a stamp in the future).
func Observe(o prometheus.Observer, skew prometheus.Counter, ns int64) {
	if ns < 0 {
		skew.Inc()
	}
	o.Observe(float64(ns) / 1e9)
}

// SkewName and SkewHelp are the skew counter's, which every part that
// counts skew registers with the constant label connection (whose clock:
// an SDK connection's WithMetrics name, or "sidecar") and the variable
// label path (which difference: "upstream", "delivery", "nats"): one
// registry takes them all only when each has its labels so.
const (
	SkewName = "wsfan_clock_skew_total"
	SkewHelp = "Stamps found later than the time they were compared with (clock skew, or a stamp taken late), by path; their delays are observed negative, as they are."
)

// MaxFamilies bounds a Families' label values: a family past them is
// counted as "other".
const MaxFamilies = 64

// Families is a histogram labelled by channel family (protocol.Family),
// each family's child resolved once and kept, at most MaxFamilies of
// them. It is safe for concurrent use.
type Families struct {
	vec *prometheus.HistogramVec

	mu   sync.Mutex // protects seen
	seen map[string]prometheus.Observer
}

// NewFamilies returns a histogram with opts and the label "family".
func NewFamilies(opts prometheus.HistogramOpts) *Families {
	return &Families{vec: prometheus.NewHistogramVec(opts, []string{"family"}), seen: make(map[string]prometheus.Observer)}
}

// For returns family's histogram. Callers keep it: it takes a lock.
func (f *Families) For(family string) prometheus.Observer {
	f.mu.Lock()
	defer f.mu.Unlock()
	if o, ok := f.seen[family]; ok {
		return o
	}
	if len(f.seen) >= MaxFamilies {
		family = "other"
		if o, ok := f.seen[family]; ok {
			return o
		}
	}
	o := f.vec.WithLabelValues(family)
	f.seen[family] = o
	return o
}

// Describe and Collect make a Families a prometheus.Collector.
func (f *Families) Describe(ch chan<- *prometheus.Desc) { f.vec.Describe(ch) }

// Collect sends each family's histogram.
func (f *Families) Collect(ch chan<- prometheus.Metric) { f.vec.Collect(ch) }
