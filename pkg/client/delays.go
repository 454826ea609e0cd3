package client

import (
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/wsfan/wsfan/internal/latency"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// Under WithStamps and WithMetrics the reader observes, for the messages
// the venue stamped (one in delaySample of each topic), this process's receive time minus the
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
			"Receive time minus the venue's stamp of a topic's first stamped message and one in 8 after it (WithStamps), by channel family; negative under clock skew.", labels)),
		skew: skew.WithLabelValues("upstream"),
	}
}

// delaySample is how many stamped messages of a topic the reader takes
// for each it observes in the histogram: the topic's first, then one in
// delaySample. An observation (a native histogram with classic buckets
// beside it) costs 55-75 ns, more than the route may spend on a stamp;
// one in 8 brings it to a few ns a message (docs/latency.md). The count
// is of the message, not of its time, so the sample leans no way: a
// burst's late messages are as likely taken as its first. Every
// message's stamp is still compared with its receive time, and each one
// in the future counted as skew.
const delaySample = 8

// topicDelay is a topic's share of the delay histogram.
type topicDelay struct {
	o prometheus.Observer // the topic's family's histogram
	n atomic.Uint64       // the topic's stamped messages so far
}

// observe records the delay of a message of ts read at recv and stamped
// venue by the venue (Unix ns), sampled (delaySample). It runs on the
// goroutine delivering ts (the reader); the topic's histogram is looked
// up once and kept.
func (d *delays) observe(ts *topicState, recv, venue int64) {
	td := ts.delay.Load()
	if td == nil {
		td = &topicDelay{o: d.families.For(protocol.Family(ts.name))}
		ts.delay.Store(td)
	}
	ns := recv - venue
	if (td.n.Add(1)-1)%delaySample != 0 {
		if ns < 0 {
			d.skew.Inc()
		}
		return
	}
	latency.Observe(td.o, d.skew, ns)
}

func (d *delays) describe(ch chan<- *prometheus.Desc) {
	d.families.Describe(ch)
	d.skew.Describe(ch)
}

func (d *delays) collect(ch chan<- prometheus.Metric) {
	d.families.Collect(ch)
	d.skew.Collect(ch)
}
