package client

import (
	"runtime/debug"
	"slices"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// Drop reasons, the "reason" label of wsfan_client_dropped_total.
const (
	dropOverflow  = iota // a subscription's buffer was full
	dropMalformed        // not JSON, or not a frame of the dialect
	dropUnrouted         // a notification for no subscribed topic
	dropUnknownID        // a response for no pending call
	dropOversized        // over the read limit
	dropBinary           // a binary message
	dropReasons
)

var dropReasonNames = [dropReasons]string{"overflow", "malformed", "unrouted", "unknown_id", "oversized", "binary"}

// stats are the client's counters. The reader goroutine writes most of
// them; the metrics collector and tests read them at any time.
type stats struct {
	frames     atomic.Uint64
	bytes      atomic.Uint64
	delivered  atomic.Uint64
	dropped    [dropReasons]atomic.Uint64
	reconnects atomic.Uint64
	rpcErrors  atomic.Uint64
	// idlessErrors counts errors without an id, each taken as the answer
	// to the oldest request waiting (conn.attribute).
	idlessErrors atomic.Uint64
	gaps         atomic.Uint64
	stale        atomic.Uint64 // topics found stale (stale.go)
	eventsDrops  atomic.Uint64
}

// collector exports a client's stats as wsfan_client_* metrics, read at
// scrape time so the hot path only bumps atomics.
type collector struct {
	c       *Client
	latency prometheus.Histogram
	delays  *delays // the venue's stamps' age (delays.go)

	frames, bytes, delivered, dropped, reconnects, rpcErrors, gaps *prometheus.Desc
	stale                                                          *prometheus.Desc
	idlessErrors                                                   *prometheus.Desc
	pending, subscriptions, topics, state, lag                     *prometheus.Desc
	endpoint                                                       *prometheus.Desc
}

func newCollector(c *Client, name string) *collector {
	labels := prometheus.Labels{"connection": name}
	desc := func(metric, help string, variable ...string) *prometheus.Desc {
		return prometheus.NewDesc("wsfan_client_"+metric, help, variable, labels)
	}
	return &collector{
		c: c,
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:        "wsfan_client_rpc_latency_seconds",
			Help:        "Time from writing a request to reading its response.",
			ConstLabels: labels,
			Buckets:     prometheus.ExponentialBuckets(50e-6, 2, 16),
		}),
		delays:        newDelays(labels),
		frames:        desc("frames_total", "Frames read from the server."),
		bytes:         desc("bytes_total", "Bytes of frames read from the server."),
		delivered:     desc("delivered_total", "Messages delivered to subscription channels."),
		dropped:       desc("dropped_total", "Frames or messages dropped, by reason.", "reason"),
		reconnects:    desc("reconnects_total", "Connections lost and re-established."),
		rpcErrors:     desc("rpc_errors_total", "Calls answered with an error object."),
		gaps:          desc("gaps_total", "Sequence gaps detected on sequenced topics."),
		stale:         desc("stale_total", "Topics found silent while others flowed, and resubscribed."),
		idlessErrors:  desc("rpc_errors_without_id_total", "Errors without an id, taken as the answer to the oldest request waiting."),
		pending:       desc("pending_calls", "Calls waiting for a response."),
		subscriptions: desc("subscriptions", "Open subscriptions."),
		topics:        desc("topics", "Distinct topics subscribed upstream."),
		state:         desc("state", "Connection state: 0 connecting, 1 connected, 2 reconnecting, 3 closed."),
		lag:           desc("lag_seconds", "Round trip of the last ping answered: how far behind the server's data arrives (0 while disconnected)."),
		endpoint:      desc("endpoint", "1 for the endpoint in use or being dialled, 0 for the others (Dial's URL, then WithEndpoints'), redacted.", "endpoint"),
	}
}

func (m *collector) Describe(ch chan<- *prometheus.Desc) {
	prometheus.DescribeByCollect(m, ch)
	m.delays.describe(ch) // no series until a stamped message came
}

func (m *collector) Collect(ch chan<- prometheus.Metric) {
	s := &m.c.stats
	counter := func(d *prometheus.Desc, v uint64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	gauge := func(d *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v)
	}
	counter(m.frames, s.frames.Load())
	counter(m.bytes, s.bytes.Load())
	counter(m.delivered, s.delivered.Load())
	for r := range dropReasons {
		counter(m.dropped, s.dropped[r].Load(), dropReasonNames[r])
	}
	counter(m.reconnects, s.reconnects.Load())
	counter(m.rpcErrors, s.rpcErrors.Load())
	counter(m.gaps, s.gaps.Load())
	counter(m.stale, s.stale.Load())
	counter(m.idlessErrors, s.idlessErrors.Load())
	subs, topics := m.c.counts()
	gauge(m.pending, float64(m.c.pendingCalls()))
	gauge(m.subscriptions, float64(subs))
	gauge(m.topics, float64(topics))
	gauge(m.state, float64(m.c.State()))
	gauge(m.lag, m.c.Lag().Seconds())
	m.c.eps.Series(func(shown string, inUse bool) {
		in := 0.0
		if inUse {
			in = 1
		}
		ch <- prometheus.MustNewConstMetric(m.endpoint, prometheus.GaugeValue, in, shown)
	})
	m.latency.Collect(ch)
	m.delays.collect(ch)
}

// modulePath is wsfan's module, whose version wsfan_build_info reports.
const modulePath = "github.com/wsfan/wsfan"

// NewBuildInfoCollector returns a collector of the gauge wsfan_build_info,
// always 1, labelled with the version of wsfan compiled into the program,
// the commit it was built from when wsfan is the main module (the sidecar),
// and the Go version, so a dashboard can show which build runs where.
// Register it once per registry; the sidecar registers it on its own.
func NewBuildInfoCollector() prometheus.Collector {
	version, revision, goVersion := buildInfo()
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "wsfan_build_info",
		Help:        "Always 1, labelled with the version of wsfan, the commit of the build and the Go version.",
		ConstLabels: prometheus.Labels{"version": version, "revision": revision, "goversion": goVersion},
	})
	g.Set(1)
	return g
}

// buildInfo reads wsfan's version from the program's build information,
// and the commit when wsfan is the main module; "unknown" where it says
// nothing.
func buildInfo() (version, revision, goVersion string) {
	version, revision, goVersion = "unknown", "unknown", "unknown"
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return
	}
	goVersion = info.GoVersion
	var mod *debug.Module
	if info.Main.Path == modulePath {
		mod = &info.Main
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" {
				revision = s.Value
			}
		}
	} else if i := slices.IndexFunc(info.Deps, func(m *debug.Module) bool { return m.Path == modulePath }); i >= 0 {
		mod = info.Deps[i]
	}
	if mod != nil && mod.Replace != nil {
		mod = mod.Replace
	}
	if mod != nil && mod.Version != "" {
		version = mod.Version
	}
	return
}
