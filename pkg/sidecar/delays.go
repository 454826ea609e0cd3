package sidecar

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/wsfan/wsfan/internal/latency"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// The sidecar measures, for each message a topic publishes, the time the
// topic built its frames (its queue delay; each client's send_ns is its
// own write's, stamps.go) minus its receive time in
// wsfan_sidecar_delivery_delay_seconds, once for each transport that has
// subscribers; in a NATS group, also the member's
// receive time minus the leader's (the Wsfan-Recv-Ns header) in
// wsfan_nats_hop_delay_seconds. A difference below zero counts in
// wsfan_clock_skew_total{connection="sidecar"} by path ("delivery",
// "nats"). The venue→sidecar delay is its upstream connection's
// (pkg/client: wsfan_upstream_delay_seconds{connection="upstream"}).

// delays are the sidecar's delay metrics; the topics' goroutines
// observe them, each metric safe for concurrent use.
type delays struct {
	delivery     *prometheus.HistogramVec
	byKind       [2]prometheus.Observer // delivery's, by sessionKind
	hop          prometheus.Histogram   // nil outside a NATS group
	skew         *prometheus.CounterVec
	skewDelivery prometheus.Counter
	skewHop      prometheus.Counter
}

func newDelays(nats bool) *delays {
	own := prometheus.Labels{"connection": "sidecar"}
	d := &delays{
		delivery: prometheus.NewHistogramVec(latency.Opts("wsfan_sidecar_delivery_delay_seconds",
			"Time each message's frames for local clients were built minus its receive time, by transport.", nil), []string{"transport"}),
		skew: prometheus.NewCounterVec(prometheus.CounterOpts{Name: latency.SkewName, Help: latency.SkewHelp, ConstLabels: own}, []string{"path"}),
	}
	for _, k := range []sessionKind{kindWS, kindSSE} {
		d.byKind[k] = d.delivery.WithLabelValues(k.String())
	}
	d.skewDelivery = d.skew.WithLabelValues("delivery")
	if nats {
		d.hop = prometheus.NewHistogram(latency.Opts("wsfan_nats_hop_delay_seconds",
			"A NATS group member's receive time minus the leader's, of each message the member publishes.", nil))
		d.skewHop = d.skew.WithLabelValues("nats")
	}
	return d
}

// observe records m's delays as the topic published it with st to
// clients of the transports in kinds (a bit per sessionKind).
func (d *delays) observe(m client.Message, st protocol.Stamps, kinds uint8) {
	recv := m.RecvTime.UnixNano()
	for k, o := range d.byKind {
		if kinds&(1<<k) != 0 {
			latency.Observe(o, d.skewDelivery, st.Send-recv)
		}
	}
	if d.hop != nil && !m.UpstreamRecvTime.IsZero() {
		latency.Observe(d.hop, d.skewHop, recv-m.UpstreamRecvTime.UnixNano())
	}
}

// Describe and Collect make delays a prometheus.Collector.
func (d *delays) Describe(ch chan<- *prometheus.Desc) {
	d.delivery.Describe(ch)
	d.skew.Describe(ch)
	if d.hop != nil {
		d.hop.Describe(ch)
	}
}

// Collect sends every series.
func (d *delays) Collect(ch chan<- prometheus.Metric) {
	d.delivery.Collect(ch)
	d.skew.Collect(ch)
	if d.hop != nil {
		d.hop.Collect(ch)
	}
}

// delayNames are the delay histograms the status shows.
var delayNames = []string{"wsfan_upstream_delay_seconds", "wsfan_sidecar_delivery_delay_seconds", "wsfan_nats_hop_delay_seconds"}

// DelayStatus is one series of a delay histogram in /v1/status: its
// observations so far and their median and 99th percentile, estimated
// from its buckets (within a native bucket's width, 9 %; docs/latency.md).
type DelayStatus struct {
	// Name is the histogram's: wsfan_upstream_delay_seconds (venue →
	// sidecar), wsfan_sidecar_delivery_delay_seconds (sidecar → its
	// clients) or wsfan_nats_hop_delay_seconds (leader → member).
	Name string `json:"name"`
	// Labels are the series' labels as name=value pairs, sorted by name
	// and comma-separated: "connection=upstream,family=ticker".
	Labels string `json:"labels,omitempty"`
	Count  uint64 `json:"count"`
	// P50 and P99 are in seconds, 0 with no observation; below zero when
	// the stamps compared are skewed (wsfan_clock_skew_total).
	P50 float64 `json:"p50_seconds"`
	P99 float64 `json:"p99_seconds"`
}

// readDelays reads every series of the delay histograms back from g, the
// sidecar's registry, where its upstream connection's (pkg/client) and
// its own (delays) are registered: gathering it is the cost, once a
// status.
func readDelays(g prometheus.Gatherer) []DelayStatus {
	rs, err := latency.Read(g, delayNames...)
	if err != nil { // a collector failed: the status goes on without them
		return nil
	}
	out := make([]DelayStatus, 0, len(rs))
	for _, r := range rs {
		out = append(out, DelayStatus{Name: r.Name, Labels: r.LabelString(), Count: r.Count, P50: r.P50, P99: r.P99})
	}
	return out
}
