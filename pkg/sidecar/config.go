package sidecar

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"

	"github.com/wsfan/wsfan/internal/format"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/natsbridge"
	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/standby"
	"github.com/wsfan/wsfan/pkg/venue"
)

// Config configures a Server. The zero value of every field means its
// documented default; Upstream and Protocol are required. The yaml tags are the
// names of the sidecar's configuration file.
type Config struct {
	// Upstream is the WebSocket URL of the real server. Required.
	Upstream string `yaml:"upstream"`
	// Fallbacks are more endpoints of the same service, in order of
	// preference after Upstream: when the connection in use fails, the
	// next is dialled at once (client.WithEndpoints), and Upstream is
	// taken back, make before break, once it has answered probes for 30 s
	// (client.WithSwitchBack: the local clients lose nothing). The
	// command line and the file give them with Upstream: -upstream a,b
	// (or -upstream again), upstream: [a, b].
	Fallbacks []string `yaml:"-"`
	// HotStandby is how many more upstream connections are kept live
	// beside the one in use, each carrying every topic, merged so each
	// message reaches the local clients once, in order of first arrival
	// (standby.Dial): when a connection dies the others carry on,
	// and the local clients see nothing. Each counts against the venue's
	// connections per address and request budget. With Fallbacks,
	// connection i prefers endpoint i. In a NATS group, the leader holds
	// its upstream so. 0 to standby.Max. Default: 0.
	HotStandby int `yaml:"hot_standby"`
	// UpstreamHeader is sent with the upstream WebSocket handshake: the
	// place for a provider's API key (Authorization: Bearer KEY,
	// X-Api-Key: KEY) rather than the URL, which travels through proxies'
	// logs. Its values are never logged or shown. A client.WithHeader in
	// UpstreamOptions replaces it. Default: none.
	UpstreamHeader http.Header `yaml:"upstream_header"`
	// UpstreamPing is how often the upstream connection is pinged and
	// UpstreamPingTimeout how late its pong may come, which is also the
	// lag threshold: a dead or black-holed upstream is noticed within
	// their sum, and one whose pongs come back more than the timeout
	// behind its data (a slow link's backlog) is replaced too
	// (client.WithPing). Defaults: 1s and 3s, noticed within 4s.
	UpstreamPing        time.Duration `yaml:"upstream_ping"`
	UpstreamPingTimeout time.Duration `yaml:"upstream_ping_timeout"`
	// UpstreamDialTimeout bounds each upstream dial, handshake included.
	// Default: 5s.
	UpstreamDialTimeout time.Duration `yaml:"upstream_dial_timeout"`
	// UpstreamReconnectMax is the longest wait between upstream reconnect
	// attempts, jitter included; the first is about 100ms, doubling
	// (client.WithReconnectWait). A healed upstream is used within it plus
	// one dial. Default: 2s.
	UpstreamReconnectMax time.Duration `yaml:"upstream_reconnect_max"`
	// Protocol is the dialect's registered name (protocol.ByName: import
	// the exchange package), spoken upstream and to local clients.
	// Required.
	Protocol string `yaml:"protocol"`
	// Listen is the address ListenAndServe listens on. Default:
	// "127.0.0.1:8765". A non-loopback address requires Token.
	Listen string `yaml:"listen"`
	// Token, when set, is required from every local client as
	// "Authorization: Bearer TOKEN" or "?token=TOKEN" (except on /healthz
	// and /readyz): several, comma-separated, are each accepted, so one
	// can be rotated out by a reload (Server.Reload), which closes the
	// clients that used it. Default: none, allowed only on loopback.
	Token string `yaml:"token"`

	// Grace is how long an upstream subscription outlives its last local
	// subscriber, so a client that reconnects does not churn the upstream.
	// Default: 5s.
	Grace time.Duration `yaml:"grace"`
	// QueueBytes bounds each local client's queue of unwritten frames.
	// Default: 4 MiB.
	QueueBytes int `yaml:"queue_bytes"`
	// Overflow is what a full queue does, named as the SDK's policies:
	// client.CloseSubscription (the default) closes the local client with
	// a "slow consumer" close reason, so it reconnects and resynchronises
	// and never silently misses a frame; client.DropNewest drops the frame
	// for that client and counts it. DropOldest and Block are refused: a
	// local client's queue mixes answers with data, and one client must
	// never stall the others.
	Overflow client.OverflowPolicy `yaml:"overflow"`
	// LastMessageCache sends a new subscriber the topic's last message
	// first, so late joiners do not wait for the next update. Default: off.
	LastMessageCache bool `yaml:"last_message_cache"`

	// Topics, when set, are the topics the upstream offers: a request for
	// any other is refused at once, naming them, without a word upstream
	// (a typo gets an answer, not a silent subscription). /v1/status lists
	// them. Default: none, every topic of the dialect is asked upstream.
	// A reload changes it, as it changes AllowedOrigins, AllowedHosts,
	// Token and the per-client limits (Server.Reload); every other
	// setting needs a restart.
	Topics []string `yaml:"topics"`

	// MaxClients caps local clients: WebSocket sessions, SSE streams,
	// status and book streams. The listener holds at most 128
	// connections more (plain requests, clients being refused); the rest
	// wait to be accepted. Default: 10000.
	MaxClients int `yaml:"max_clients"`
	// IdleConnTimeout closes a keep-alive connection that has sat this
	// long without a request since its last one (a connection that never
	// sends one is closed 10s after it connected, the header timeout).
	// While the listener is full (MaxClients plus 128), a connection
	// that is not a client and has been idle (or silent) for a second is
	// closed at once, so idle connections never keep clients out.
	// WebSocket clients and SSE, status and book streams are never cut
	// by either. Default: 5s.
	IdleConnTimeout time.Duration `yaml:"idle_conn_timeout"`
	// MaxTopicsPerClient caps one client's subscriptions. Default: 1000.
	MaxTopicsPerClient int `yaml:"max_topics_per_client"`
	// MaxTopics caps distinct upstream topics, which also bounds the topic
	// label of the metrics. Default: 10000.
	MaxTopics int `yaml:"max_topics"`
	// MaxFrameBytes caps a frame from a local client. Default: 1 MiB.
	MaxFrameBytes int64 `yaml:"max_frame_bytes"`
	// MaxCallsPerClient caps one client's forwarded calls in flight,
	// a batch's included. Default: 64.
	MaxCallsPerClient int `yaml:"max_calls_per_client"`
	// Record, when set, records every frame of the upstream connection
	// (of each leg with HotStandby) into that directory (pkg/record),
	// served again by cmd/replay. Recording never slows delivery: a
	// slow or full disk drops frames from the recording, counted in
	// /v1/status. Default: off.
	Record string `yaml:"record"`
	// RecordPrivate records private topics and the answers to calls that
	// are not read-only, which hold account data. Default: off.
	RecordPrivate bool `yaml:"record_private"`
	// MaxBatch caps the requests of one JSON-RPC batch array: a longer
	// batch is answered with one error naming the limit, before any of
	// it is parsed. A batch's answer is bounded by QueueBytes: one that
	// would pass it closes the client (close code 1009, saying so).
	// Default: 1000, as go-ethereum's server.
	MaxBatch int `yaml:"max_batch"`

	// RateLimit paces the requests sent upstream, in requests a second:
	// forwarded calls and subscribes of every local client together, so
	// that many local programs cannot push the shared account over the
	// exchange's limit. A call over it waits for its turn (within
	// RequestTimeout) instead of being refused by the exchange; the
	// restore after a reconnect still goes out at once, in one write, and
	// the calls after it wait for what it took. For an exchange's credit
	// model (Deribit's costs per method) pass client.WithRateLimit in
	// UpstreamOptions instead. Default: 0, no limit.
	RateLimit float64 `yaml:"rate_limit"`
	// RateBurst is how many requests go upstream at once under RateLimit.
	// Default: one second's worth (RateLimit, rounded up).
	RateBurst int `yaml:"rate_burst"`

	// SSEHistory and SSEHistoryBytes bound what each topic keeps, once it
	// has had an SSE subscriber, for streams that resume with
	// Last-Event-ID: the last SSEHistory messages, at most SSEHistoryBytes
	// of payload. A stream that asks for more than is kept gets a gap
	// mark. Defaults: 1000 messages, 1 MiB.
	SSEHistory      int `yaml:"sse_history"`
	SSEHistoryBytes int `yaml:"sse_history_bytes"`

	// WriteTimeout bounds each write to a local client. Default: 10s.
	WriteTimeout time.Duration `yaml:"write_timeout"`
	// RequestTimeout bounds an upstream subscribe or forwarded call,
	// including waiting for the upstream to come back. Default: 30s.
	RequestTimeout time.Duration `yaml:"request_timeout"`
	// DrainTimeout bounds the drain when ListenAndServe's context ends.
	// Default: 10s.
	DrainTimeout time.Duration `yaml:"drain_timeout"`

	// BlockedMethods are never forwarded upstream: the upstream connection
	// is shared, so a local login would authenticate every local client,
	// a logout would end the session of all, and a private subscription
	// would show the account to any of them. Log in with UpstreamOptions
	// (client.WithOnConnect) instead. Default: the exchange's session
	// methods (venue.Exchange.SessionMethods): Thalex public/login,
	// private/set_cancel_on_disconnect, private/subscribe; Deribit
	// public/auth, public/exchange_token, public/fork_token,
	// private/logout, private/enable_cancel_on_disconnect,
	// private/disable_cancel_on_disconnect, private/subscribe.
	BlockedMethods []string `yaml:"blocked_methods"`
	// AllowedOrigins lists the browser origins allowed to open WebSocket
	// and SSE streams ("*" for any). Default: none, so a web page cannot
	// reach a sidecar on localhost; programs send no Origin and are allowed.
	AllowedOrigins []string `yaml:"allowed_origins"`

	// AllowedHosts lists the names, beyond the default ones, under which
	// the sidecar answers: every request whose Host header is not one of
	// them is refused with 403, on every endpoint, so a web page whose
	// domain was re-pointed at 127.0.0.1 (DNS rebinding) cannot use a
	// sidecar on the user's machine. Entries are host names
	// (sidecar.example, no port), "*.example.com" for a domain's
	// subdomains, IP addresses and networks (10.0.0.0/8); "*" turns the
	// check off (logged as a warning). Always allowed: localhost,
	// 127.0.0.0/8, ::1 and Listen's host; every IP address when Listen is
	// all interfaces (0.0.0.0 or ::), since rebinding needs a name. The
	// token, when set, still applies. Default: none beyond those.
	AllowedHosts []string `yaml:"allowed_hosts"`

	// NATS, when set, makes the sidecar a member of a group of sidecars
	// that share one upstream connection through NATS (pkg/natsbridge):
	// comma-separated server URLs (nats://host:4222). Exactly one member,
	// the leader, holds the upstream; every member serves its local
	// clients from NATS, and a leader change reaches them as a reconnect
	// (the resumed mark, wsfan.reconnected). Default: none, the sidecar
	// holds the upstream itself.
	NATS string `yaml:"nats"`
	// NATSGroup names the group: one per exchange account (deribit-main).
	// Required with NATS.
	NATSGroup string `yaml:"nats_group"`
	// NATSCreds is a NATS credentials file (JWT and NKey). Default: none.
	NATSCreds string `yaml:"nats_creds"`
	// NATSTLSCA, NATSTLSCert and NATSTLSKey are PEM files: the CA that
	// signs the NATS servers' certificates, and this client's certificate
	// and key (both or neither). Default: none.
	NATSTLSCA   string `yaml:"nats_tls_ca"`
	NATSTLSCert string `yaml:"nats_tls_cert"`
	NATSTLSKey  string `yaml:"nats_tls_key"`
	// NATSLeaseTTL is the leader lease's time to live: a takeover after
	// the leader dies takes at most 1.25 times it plus the new leader's
	// dial (the lease expires, then a member's next poll, every quarter
	// TTL, wins it), and a leader cut off from NATS stops using its
	// upstream within half of it. At least 200ms. Default:
	// natsbridge.DefaultLeaseTTL (2s).
	NATSLeaseTTL time.Duration `yaml:"nats_lease_ttl"`
	// NATSPing is how often the sidecar pings its NATS server, and
	// NATSMaxPingsOut how many pings may be unanswered before the link is
	// taken for dead and dialled again: a dead or stalled link is noticed
	// within NATSMaxPingsOut+1 pings. Default: 1s and 3, about 4s
	// (nats.go's own are 2 minutes and 2).
	NATSPing        time.Duration `yaml:"nats_ping"`
	NATSMaxPingsOut int           `yaml:"nats_max_pings_out"`
	// NATSOptions are added to the group member's options
	// (natsbridge.WithYieldAfter, natsbridge.WithSilentAfter...).
	// Default: none.
	NATSOptions []natsbridge.Option `yaml:"-"`

	// Logger logs state changes and errors, never per frame. Default: nop.
	Logger *zap.Logger `yaml:"-"`
	// Registry receives the wsfan_sidecar_* and the upstream's
	// wsfan_client_* metrics and is served on /metrics. Default: a new
	// registry with the Go and process collectors.
	Registry *prometheus.Registry `yaml:"-"`
	// UpstreamOptions are added to the upstream client's options (login
	// hook, TLS, backoff...). Default: none.
	UpstreamOptions []client.Option `yaml:"-"`
	// TracerProvider, when set, makes each forwarded call and each round
	// of upstream subscribes a span, under the W3C traceparent of the
	// local client's HTTP request (the WebSocket upgrade's, the SSE
	// stream's) when it sent one (docs/tracing.md). The sidecar uses the
	// OpenTelemetry API only: the program brings the SDK, its sampler and
	// exporter (cmd/sidecar's -otlp-endpoint). Default: nil, no spans,
	// and the call paths allocate nothing for them.
	TracerProvider trace.TracerProvider `yaml:"-"`
}

// DefaultListen is Config.Listen's default.
const DefaultListen = "127.0.0.1:8765"

// withDefaults fills the zero fields and validates the rest.
func (c Config) withDefaults() (Config, protocol.Protocol, error) {
	if c.Upstream == "" {
		return c, nil, errors.New("no upstream: Config.Upstream is required")
	}
	if c.Protocol == "" {
		return c, nil, fmt.Errorf("no protocol: Config.Protocol is required, one of the registered dialects: %s", format.OneOf(protocol.Names()))
	}
	proto, err := protocol.ByName(c.Protocol)
	if err != nil {
		return c, nil, err
	}
	if c.Listen == "" {
		c.Listen = DefaultListen
	}
	if !isLoopback(c.Listen) && len(splitTokens(c.Token)) == 0 {
		return c, nil, fmt.Errorf("listening on %s (not loopback) requires a token", c.Listen)
	}
	if err := c.checkOverflow(); err != nil {
		return c, nil, err
	}
	setDefault(&c.Grace, 5*time.Second)
	setDefault(&c.QueueBytes, 4<<20)
	setDefault(&c.MaxClients, 10000)
	setDefault(&c.IdleConnTimeout, defaultIdleConnTimeout)
	setDefault(&c.MaxTopicsPerClient, 1000)
	setDefault(&c.MaxTopics, 10000)
	setDefault(&c.MaxFrameBytes, 1<<20)
	setDefault(&c.MaxCallsPerClient, 64)
	setDefault(&c.MaxBatch, 1000)
	setDefault(&c.SSEHistory, 1000)
	setDefault(&c.SSEHistoryBytes, 1<<20)
	if c.HotStandby < 0 || c.HotStandby > standby.Max {
		return c, nil, fmt.Errorf("hot standby %d: want 0 to %d", c.HotStandby, standby.Max)
	}
	if c.RateLimit < 0 || math.IsNaN(c.RateLimit) || math.IsInf(c.RateLimit, 0) || c.RateBurst < 0 {
		return c, nil, fmt.Errorf("rate limit %v a second in bursts of %d: want a finite rate and burst, 0 or more", c.RateLimit, c.RateBurst)
	}
	if c.RateLimit > 0 {
		setDefault(&c.RateBurst, int(math.Ceil(c.RateLimit)))
	}
	for name, d := range map[string]time.Duration{"UpstreamPing": c.UpstreamPing, "UpstreamPingTimeout": c.UpstreamPingTimeout,
		"UpstreamDialTimeout": c.UpstreamDialTimeout, "UpstreamReconnectMax": c.UpstreamReconnectMax, "IdleConnTimeout": c.IdleConnTimeout} {
		if d < 0 {
			return c, nil, fmt.Errorf("%s %v is negative: want a duration, or 0 for the default", name, d)
		}
	}
	if err := c.checkNATS(); err != nil {
		return c, nil, err
	}
	setDefault(&c.WriteTimeout, 10*time.Second)
	setDefault(&c.RequestTimeout, 30*time.Second)
	setDefault(&c.DrainTimeout, 10*time.Second)
	if c.BlockedMethods == nil {
		c.BlockedMethods = venue.ByName(c.Protocol).SessionMethods
	}
	if c.Logger == nil {
		c.Logger = zap.NewNop()
	}
	return c, proto, nil
}

// checkOverflow fills the overflow default and refuses the policies a
// fan-out cannot keep.
func (c *Config) checkOverflow() error {
	switch c.Overflow {
	case client.DefaultOverflow:
		c.Overflow = client.CloseSubscription
	case client.CloseSubscription, client.DropNewest:
	case client.DropOldest:
		return errors.New("overflow drop-oldest is not offered for local clients: their queue holds answers beside data; want close-subscription or drop-newest")
	case client.Block:
		return errors.New("overflow block is not offered for local clients: one slow client would stall every other; want close-subscription or drop-newest")
	default:
		return fmt.Errorf("unknown overflow policy %v: want close-subscription or drop-newest", c.Overflow)
	}
	return nil
}

// checkNATS checks the NATS settings and fills their defaults.
func (c *Config) checkNATS() error {
	if c.NATS == "" {
		if c.NATSGroup != "" || c.NATSCreds != "" || c.NATSTLSCA != "" || c.NATSTLSCert != "" || c.NATSTLSKey != "" {
			return errors.New("NATS settings without NATS: set the NATS server URLs too")
		}
		return nil
	}
	if c.NATSGroup == "" {
		return errors.New("NATS needs NATSGroup, the group's name (one per exchange account)")
	}
	if err := natsbridge.CheckGroup(c.NATSGroup); err != nil {
		return err
	}
	if (c.NATSTLSCert == "") != (c.NATSTLSKey == "") {
		return errors.New("NATSTLSCert and NATSTLSKey go together")
	}
	setDefault(&c.NATSLeaseTTL, natsbridge.DefaultLeaseTTL)
	setDefault(&c.NATSPing, time.Second)
	setDefault(&c.NATSMaxPingsOut, 3)
	if c.NATSPing < 0 || c.NATSMaxPingsOut < 0 {
		return errors.New("NATSPing and NATSMaxPingsOut cannot be negative")
	}
	if c.NATSLeaseTTL < 200*time.Millisecond {
		return fmt.Errorf("NATS lease TTL %v is below 200ms", c.NATSLeaseTTL)
	}
	return nil
}

// upstreamLiveness are the upstream client's options for the ping,
// dial and reconnect settings that were set; the client's defaults
// stand for the others.
func (c *Config) upstreamLiveness() []client.Option {
	var opts []client.Option
	if c.UpstreamPing != 0 || c.UpstreamPingTimeout != 0 {
		opts = append(opts, client.WithPing(cmp.Or(c.UpstreamPing, defaultUpstreamPing), cmp.Or(c.UpstreamPingTimeout, defaultUpstreamPingTimeout)))
	}
	if c.UpstreamDialTimeout != 0 {
		opts = append(opts, client.WithDialTimeout(c.UpstreamDialTimeout))
	}
	if c.UpstreamReconnectMax != 0 {
		opts = append(opts, client.WithReconnectWait(100*time.Millisecond, c.UpstreamReconnectMax))
	}
	return opts
}

// The upstream's ping defaults, client.WithPing's.
const (
	defaultUpstreamPing        = time.Second
	defaultUpstreamPingTimeout = 3 * time.Second
)

func setDefault[T comparable](v *T, def T) {
	var zero T
	if *v == zero {
		*v = def
	}
}

// isLoopback reports whether a listen address only accepts local
// connections: 127.0.0.0/8, ::1 or "localhost". An empty host (all
// interfaces) is not loopback.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
