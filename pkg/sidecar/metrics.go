package sidecar

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/wsfan/wsfan/pkg/client"
)

// collector exports the sidecar's counters as wsfan_sidecar_* metrics,
// read at scrape time so the hot path only bumps atomics. The topic label
// is bounded by Config.MaxTopics. It reads the parts it is built from,
// and also exports wsfan_build_info.
type collector struct {
	stats    *stats
	hub      *hub
	sessions *registry
	upstream func() client.State
	conns    *idleConns
	guard    *tokenGuard
	build    prometheus.Collector

	clients, topics, upstreamUp, queueBytes                           *prometheus.Desc
	connections, dropped, disconnects, written, calls, callErrors     *prometheus.Desc
	reconnects, resumes, received, delivered, topicDropped, topicRefs *prometheus.Desc
	hostRefusals, crossSiteRefusals, tokenRefusals                    *prometheus.Desc
	invalidUTF8, refusals, refusalLogsSuppressed                      *prometheus.Desc
	openConns, idleReaped, tokenDelayed, tokenThrottled, tokenSlowed  *prometheus.Desc
	reloads                                                           *prometheus.Desc
}

func newCollector(st *stats, h *hub, sessions *registry, upstream func() client.State, conns *idleConns, guard *tokenGuard) *collector {
	desc := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc("wsfan_sidecar_"+name, help, labels, nil)
	}
	return &collector{
		stats:                 st,
		hub:                   h,
		sessions:              sessions,
		upstream:              upstream,
		conns:                 conns,
		guard:                 guard,
		build:                 client.NewBuildInfoCollector(),
		clients:               desc("clients", "Local clients connected, by kind.", "kind"),
		topics:                desc("topics", "Upstream topics held."),
		upstreamUp:            desc("upstream_connected", "1 while the upstream is connected."),
		queueBytes:            desc("queue_bytes", "Bytes queued to local clients and not yet written."),
		connections:           desc("connections_total", "Local clients accepted."),
		dropped:               desc("dropped_total", "Frames not queued to a local client, by reason.", "reason"),
		disconnects:           desc("disconnects_total", "Local clients disconnected by the sidecar, by reason.", "reason"),
		written:               desc("written_bytes_total", "Bytes written to local clients."),
		calls:                 desc("calls_total", "Calls forwarded upstream."),
		callErrors:            desc("call_errors_total", "Forwarded calls that failed."),
		reconnects:            desc("upstream_reconnects_total", "Upstream connections lost."),
		resumes:               desc("upstream_resumes_total", "Topic streams resumed after an upstream reconnect."),
		received:              desc("topic_received_total", "Messages received from upstream.", "topic"),
		delivered:             desc("topic_delivered_total", "Frames queued to local clients.", "topic"),
		topicDropped:          desc("topic_dropped_total", "Frames not queued to local clients.", "topic"),
		topicRefs:             desc("topic_subscribers", "Local subscribers of a topic.", "topic"),
		hostRefusals:          desc("host_refusals_total", "Requests refused because their Host is not an allowed name (Config.AllowedHosts)."),
		invalidUTF8:           desc("upstream_invalid_utf8_total", "Upstream messages that were not valid UTF-8, passed on with U+FFFD in place of each invalid byte sequence."),
		crossSiteRefusals:     desc("cross_site_refusals_total", "Browser requests of another site refused for want of an allowed origin."),
		tokenRefusals:         desc("token_refusals_total", "Requests refused for a missing or wrong token."),
		refusals:              desc("refusals_total", "Local subscribes and batches refused, by reason.", "reason"),
		refusalLogsSuppressed: desc("refusal_logs_suppressed_total", "Refusals not logged: one client's refusals are logged at most once a second."),
		openConns:             desc("open_connections", "Connections the listener holds: clients, requests, idle ones."),
		idleReaped:            desc("idle_connections_reaped_total", "Connections that were not clients, closed after sitting idle while the listener was full."),
		tokenDelayed:          desc("token_delayed_total", "Requests with a wrong token whose 401 was delayed: guessing slowed down."),
		tokenThrottled:        desc("token_throttled_total", "Requests with a wrong token refused at once with 429: too many of their address were waiting."),
		tokenSlowed:           desc("token_slowed_addresses", "Addresses whose wrong tokens are being slowed down."),
		reloads:               desc("config_reloads_total", "Configuration reloads, by outcome: applied, refused (a setting that needs a restart), invalid.", "outcome"),
	}
}

func (m *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{m.clients, m.topics, m.upstreamUp, m.queueBytes,
		m.connections, m.dropped, m.disconnects, m.written, m.calls, m.callErrors,
		m.reconnects, m.resumes, m.received, m.delivered, m.topicDropped, m.topicRefs, m.hostRefusals, m.crossSiteRefusals, m.tokenRefusals, m.invalidUTF8, m.refusals, m.refusalLogsSuppressed,
		m.openConns, m.idleReaped, m.tokenDelayed, m.tokenThrottled, m.tokenSlowed, m.reloads} {
		ch <- d
	}
	m.build.Describe(ch)
}

func (m *collector) Collect(ch chan<- prometheus.Metric) {
	m.build.Collect(ch)
	counter := func(d *prometheus.Desc, v uint64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	var ws, sse, queued int
	for _, ss := range m.sessions.list() {
		if ss.kind == kindSSE {
			sse++
		} else {
			ws++
		}
		_, b := ss.queued()
		queued += b
	}
	gauge(m.clients, float64(ws), kindWS.String())
	gauge(m.clients, float64(sse), kindSSE.String())
	gauge(m.queueBytes, float64(queued))
	up := 0.0
	if m.upstream() == client.StateConnected {
		up = 1
	}
	gauge(m.upstreamUp, up)
	counter(m.connections, m.stats.connections.Load())
	for r := range dropReasons {
		counter(m.dropped, m.stats.dropped[r].Load(), dropReasonNames[r])
	}
	for i, r := range disconnectReasons {
		counter(m.disconnects, m.stats.disconnect[i].Load(), r)
	}
	counter(m.written, m.stats.writtenBytes.Load())
	counter(m.calls, m.stats.calls.Load())
	counter(m.callErrors, m.stats.callErrors.Load())
	counter(m.reconnects, m.stats.reconnects.Load())
	counter(m.resumes, m.stats.resumes.Load())
	counter(m.hostRefusals, m.stats.hostRefusals.Load())
	counter(m.invalidUTF8, m.stats.invalidUTF8.Load())
	counter(m.crossSiteRefusals, m.stats.crossSiteRefusals.Load())
	counter(m.tokenRefusals, m.stats.tokenRefusals.Load())
	for r := range refusalReasons {
		counter(m.refusals, m.stats.refusals[r].Load(), refusalReasonNames[r])
	}
	counter(m.refusalLogsSuppressed, m.stats.refusalLogsSuppressed.Load())
	gauge(m.openConns, float64(m.conns.openConns()))
	counter(m.idleReaped, m.conns.reaped.Load())
	counter(m.tokenDelayed, m.guard.delayed.Load())
	counter(m.tokenThrottled, m.guard.throttled.Load())
	gauge(m.tokenSlowed, float64(m.guard.slowedAddresses()))
	for i, outcome := range reloadOutcomeNames {
		counter(m.reloads, m.stats.reloads[i].Load(), outcome)
	}
	topics := m.hub.status()
	gauge(m.topics, float64(len(topics)))
	for _, t := range topics {
		counter(m.received, t.Received, t.Topic)
		counter(m.delivered, t.Delivered, t.Topic)
		counter(m.topicDropped, t.Dropped, t.Topic)
		gauge(m.topicRefs, float64(t.Refs), t.Topic)
	}
}
