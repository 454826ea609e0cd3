package sidecar

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/wsfan/wsfan/internal/latency"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// The sidecar measures, for each message a topic publishes, its send
// time (taken once a message, when the topic builds its frames) minus its
// receive time in wsfan_sidecar_delivery_delay_seconds, once for each
// transport that has subscribers; in a NATS group, also the member's
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
			"Send time minus receive time of each message published to local clients, by transport.", nil), []string{"transport"}),
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
