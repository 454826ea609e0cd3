package client

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/wsfan/wsfan/internal/latency"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// Under WithStamps and WithMetrics the reader observes, for every
// message the venue stamped, this process's receive time minus the
// venue's stamp in wsfan_upstream_delay_seconds, labelled by the topic's
// channel family (protocol.Family), and counts a stamp later than the
// receive time in wsfan_clock_skew_total{path="upstream"}. Behind a
// sidecar the delay includes the sidecar's hop: it is the message's age
// when this process read it. The sidecar's own upstream delay is its
// upstream connection's (connection="upstream").

// delays are a client's delay metrics, part of its collector.
type delays struct {
	families *latency.Families
	skew     prometheus.Counter
}

func newDelays(labels prometheus.Labels) *delays {
	// path a variable label, as every part counting skew has it: one
	// registry may hold them all (the sidecar's).
	skew := prometheus.NewCounterVec(prometheus.CounterOpts{Name: latency.SkewName, Help: latency.SkewHelp, ConstLabels: labels}, []string{"path"})
	return &delays{
		families: latency.NewFamilies(latency.Opts("wsfan_upstream_delay_seconds",
			"Receive time minus the venue's stamp of each message that carries one (WithStamps), by channel family; negative under clock skew.", labels)),
		skew: skew.WithLabelValues("upstream"),
	}
}

// observe records the delay of a message of ts read at recv and stamped
// venue by the venue (Unix ns). It runs on the goroutine delivering ts
// (the reader); the topic's histogram is looked up once and kept.
func (d *delays) observe(ts *topicState, recv, venue int64) {
	o := ts.delay.Load()
	if o == nil {
		h := d.families.For(protocol.Family(ts.name))
		o = &h
		ts.delay.Store(o)
	}
	latency.Observe(*o, d.skew, recv-venue)
}

func (d *delays) describe(ch chan<- *prometheus.Desc) {
	d.families.Describe(ch)
	d.skew.Describe(ch)
}

func (d *delays) collect(ch chan<- prometheus.Metric) {
	d.families.Collect(ch)
	d.skew.Collect(ch)
}
