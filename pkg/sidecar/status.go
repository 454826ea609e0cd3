package sidecar

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/wsfan/wsfan/internal/redact"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// Status is what /v1/status returns.
type Status struct {
	Upstream UpstreamStatus `json:"upstream"` // the upstream connection
	Topics   []TopicStatus  `json:"topics"`   // every upstream topic held, those in their grace period included
	Clients  []ClientStatus `json:"clients"`  // every local client
	// Offered is Config.Topics, as last reloaded: what the upstream offers, when known,
	// each with the frame that subscribes it.
	Offered []OfferedTopic `json:"offered_topics,omitempty"`
	// Refusals are the last local subscribes refused, newest first: who
	// asked for what, and why.
	Refusals []Refusal `json:"refusals,omitempty"`
	// Recording is Config.Record's recorder: what it kept and dropped.
	Recording *RecordingStatus `json:"recording,omitempty"`
	// Config is the running configuration's version and reloads
	// (Server.Reload).
	Config ConfigStatus `json:"config"`
	// Delays are the latency histograms' series, each with its p50 and
	// p99 (docs/latency.md); a series appears with its first observation,
	// the delivery's at once.
	Delays []DelayStatus `json:"delays,omitempty"`
}

// RecordingStatus is the recording's line of /v1/status (Config.Record).
type RecordingStatus struct {
	Dir      string `json:"dir"`
	Recorded uint64 `json:"recorded"` // frames written
	Dropped  uint64 `json:"dropped"`  // frames not recorded: the disk was behind or failed
	Left     uint64 `json:"left"`     // frames left out: private data (Config.RecordPrivate)
	Segments int    `json:"segments"`
	Bytes    int64  `json:"bytes"`
}

// OfferedTopic is one topic of Config.Topics and how to try it.
type OfferedTopic struct {
	Topic string `json:"topic"` // the topic's name
	// SubscribeFrame is what a program sends over /ws to subscribe the
	// topic, in the upstream's dialect.
	SubscribeFrame string `json:"subscribe_frame,omitempty"`
	// StreamPath is the topic's SSE path, relative to the sidecar's root.
	StreamPath string `json:"stream_path"`
}

// offeredTopics describes each of topics and how to try it over proto.
func offeredTopics(proto protocol.Protocol, topics []string) []OfferedTopic {
	var out []OfferedTopic
	for _, topic := range topics {
		frame, _ := protocol.SubscribeFrame(proto, topic) // a topic proto refuses shows no frame
		out = append(out, OfferedTopic{Topic: topic, SubscribeFrame: frame,
			StreamPath: "v1/stream?topic=" + url.QueryEscape(topic)})
	}
	return out
}

// UpstreamStatus describes the upstream connection.
type UpstreamStatus struct {
	// URL is Config.Upstream with its credentials redacted: no userinfo,
	// no query values, no path segment that looks like a key.
	URL string `json:"url"`
	// Endpoint is the endpoint in use, or being dialled (Config.Upstream
	// or one of Config.Fallbacks), redacted as URL; Endpoints all of them,
	// in order of preference. Empty for a NATS group's member.
	Endpoint  string   `json:"endpoint,omitempty"`
	Endpoints []string `json:"endpoints,omitempty"`
	Protocol  string   `json:"protocol"`
	State     string   `json:"state"`
	// Reconnects counts upstream connections lost; Resumes counts topics
	// whose stream resumed after one, LastResume when that last happened.
	Reconnects uint64     `json:"reconnects"`
	Resumes    uint64     `json:"resumes"`
	LastResume *time.Time `json:"last_resume,omitempty"`
	// Group is the NATS group the sidecar serves from (Config.NATS);
	// State is then its NATS connection's while that is not connected,
	// and otherwise the group's upstream state as the leader reports it
	// (reconnecting while no report came within the lease TTL), and
	// LagSeconds the leader's upstream round trip.
	Group *GroupStatus `json:"group,omitempty"`
	// LastError is the upstream's last failure (a dial, a lost
	// connection), redacted, and LastErrorAt when it came; Attempts
	// counts the dials since the upstream was last up, and NextRetry is
	// when the next one comes. They say why the state is not connected.
	LastError   string     `json:"last_error,omitempty"`
	LastErrorAt *time.Time `json:"last_error_at,omitempty"`
	Attempts    int        `json:"attempts,omitempty"`
	NextRetry   *time.Time `json:"next_retry,omitempty"`
	// LagSeconds is the upstream link's last ping round trip: how far
	// behind the upstream's data arrives, a slow link's backlog included
	// (client.Client.Lag); 0 when not known.
	LagSeconds float64 `json:"lag_seconds"`
	// Legs are the connections of a hot standby (Config.HotStandby),
	// the one in use and the others alike; empty without one.
	Legs []LegStatus `json:"legs,omitempty"`
}

// LegStatus describes one connection of a hot standby.
type LegStatus struct {
	Leg        int     `json:"leg"`
	Endpoint   string  `json:"endpoint"` // redacted, as UpstreamStatus.Endpoint
	State      string  `json:"state"`
	LagSeconds float64 `json:"lag_seconds"`
}

// TopicStatus describes one upstream topic.
type TopicStatus struct {
	Topic string `json:"topic"` // the topic's name
	// LocalID is the subscription id local Ethereum clients get.
	LocalID string `json:"local_id,omitempty"`
	// Refs counts local subscribers; 0 while the grace period runs.
	Refs int `json:"refs"`
	// Rate is upstream messages per second over the last second.
	Rate      float64 `json:"rate"`
	Received  uint64  `json:"received"`
	Delivered uint64  `json:"delivered"`
	Dropped   uint64  `json:"dropped"`
	// UpstreamDropped counts messages the upstream client dropped because
	// the topic's pump fell behind.
	UpstreamDropped uint64 `json:"upstream_dropped"`
	Resumes         uint64 `json:"resumes"`
	// LastMessage is when the topic's last message was received upstream,
	// AgeSeconds how long ago; Stale says the upstream client found it
	// silent for much longer than its usual interval while other topics
	// flowed, and resubscribed it (client.WithStaleAfter).
	LastMessage *time.Time `json:"last_message,omitempty"`
	AgeSeconds  float64    `json:"age_seconds"`
	Stale       bool       `json:"stale,omitempty"`
	// Book describes the topic's order book, when it is one.
	Book *BookStatus `json:"book,omitempty"`
}

// BookStatus describes the order book the sidecar keeps of a topic.
type BookStatus struct {
	// Valid is false until the exchange's snapshot, and while a resync
	// runs after a break.
	Valid bool `json:"valid"`
	// BestBid, BestAsk, Mid and Spread are exact decimals, empty when a
	// side is.
	BestBid string `json:"best_bid,omitempty"`
	BestAsk string `json:"best_ask,omitempty"`
	Mid     string `json:"mid,omitempty"`
	Spread  string `json:"spread,omitempty"`
	// BidLevels and AskLevels are the book's depth.
	BidLevels int `json:"bid_levels"`
	AskLevels int `json:"ask_levels"`
	// Seq is the exchange's sequence number of the last message (0 where
	// the exchange numbers none).
	Seq int64 `json:"seq,omitempty"`
	// Breaks counts the breaks (each one resync upstream).
	Breaks uint64 `json:"breaks"`
}

// ClientStatus describes one local client.
type ClientStatus struct {
	ID          uint64    `json:"id"`           // the client's number, from 1 in connection order
	Kind        string    `json:"kind"`         // ws or sse
	Remote      string    `json:"remote"`       // the client's address
	Since       time.Time `json:"since"`        // when it connected
	Topics      int       `json:"topics"`       // how many topics it is subscribed to
	QueueFrames int       `json:"queue_frames"` // frames queued for the client's writer
	QueueBytes  int       `json:"queue_bytes"`  // bytes queued for the client's writer
	// Every notification offered to the client is either Delivered
	// (queued) or Dropped; Written counts the frames written, responses
	// to the client's requests included.
	Delivered uint64 `json:"delivered"`
	Dropped   uint64 `json:"dropped"`
	Written   uint64 `json:"written"`
	// Closing is why the sidecar is disconnecting the client, if it is.
	Closing string `json:"closing,omitempty"`
}

// Status returns a snapshot of the upstream, the topics and the clients.
func (s *Server) Status() Status {
	live := s.live.Load()
	st := Status{Topics: []TopicStatus{}, Clients: []ClientStatus{}, Offered: live.offered, Config: s.configStatus()}
	st.Upstream = UpstreamStatus{
		URL:        redact.URL(live.endpoints[0]),
		Protocol:   s.proto.Name(),
		State:      s.src.state().String(),
		Reconnects: s.stats.reconnects.Load(),
		Resumes:    s.stats.resumes.Load(),
		Group:      s.src.group(),
		LagSeconds: s.src.lag().Seconds(),
		Endpoint:   s.src.endpoint(),
		Legs:       s.src.legs(),
	}
	if s.cfg.NATS == "" {
		for _, u := range live.endpoints {
			st.Upstream.Endpoints = append(st.Upstream.Endpoints, redact.URL(u))
		}
	}
	s.src.trouble().fill(&st.Upstream)
	if ns := s.stats.lastResume.Load(); ns != 0 {
		t := time.Unix(0, ns)
		st.Upstream.LastResume = &t
	}
	st.Topics = append(st.Topics, s.hub.status()...)
	for i := range st.Topics {
		st.Topics[i].Stale, _ = s.src.quiet(st.Topics[i].Topic)
	}
	st.Refusals = s.hub.refusals.list()
	if s.rec != nil {
		rs := s.rec.Stats()
		st.Recording = &RecordingStatus{Dir: s.cfg.Record, Recorded: rs.Recorded, Dropped: rs.Dropped, Left: rs.Left, Segments: rs.Segments, Bytes: rs.Bytes}
	}
	for _, ss := range s.clients.list() {
		st.Clients = append(st.Clients, ss.status())
	}
	st.Delays = readDelays(s.reg)
	return st
}

func (s *Server) serveStatus(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(s.Status())
}

// serveHealthz answers 200 while the process serves.
func (s *Server) serveHealthz(w http.ResponseWriter, _ *http.Request) {
	_, _ = w.Write([]byte("ok\n"))
}

// serveReadyz answers 200 while the sidecar is Ready and not draining,
// 503 otherwise, saying why.
func (s *Server) serveReadyz(w http.ResponseWriter, _ *http.Request) {
	if s.clients.isDraining() {
		http.Error(w, "draining", http.StatusServiceUnavailable)
		return
	}
	if why := s.unready(); why != "" {
		http.Error(w, why, http.StatusServiceUnavailable)
		return
	}
	_, _ = w.Write([]byte("ok\n"))
}

// Ready reports whether the sidecar serves live data: the upstream is
// connected (in a NATS group: the group is joined, NATS connected and the
// leader reports its upstream connected), and not every topic held is
// silent for over 10 times its usual interval and at least 5s
// (client.WithStaleAfter's defaults; in a NATS group, the messages that
// reach this member, natsbridge.WithSilentAfter). A dead upstream is noticed within
// Config.UpstreamPing + UpstreamPingTimeout (4s by default).
func (s *Server) Ready() bool { return s.unready() == "" }

// unready says why the sidecar is not ready, or "" when it is.
func (s *Server) unready() string {
	if state := s.src.state(); state != client.StateConnected {
		return "upstream " + state.String()
	}
	topics := s.hub.list()
	if len(topics) == 0 {
		return ""
	}
	for _, t := range topics {
		if _, silent := s.src.quiet(t.upstream); !silent {
			return ""
		}
	}
	return fmt.Sprintf("every topic (%d) silent far beyond its usual interval: the upstream answers pings but sends no data", len(topics))
}
