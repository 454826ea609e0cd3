package client

import (
	"context"
	"crypto/tls"
	"net/http"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/gorilla/websocket"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/wsfan/wsfan/internal/connpace"
	"github.com/wsfan/wsfan/internal/pace"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// OnConnect runs on every new connection before subscriptions are
// restored; use it to log in (Thalex public/login, Deribit public/auth;
// package auth has both). An error drops the connection and is retried
// with backoff, except a refused login (an error wrapping
// ErrLoginRefused) on a reconnect: retrying would be refused again, so
// the connection stays, the public topics are restored and the
// subscriptions holding a private topic end with the error.
type OnConnect func(ctx context.Context, c *Client) error

// Option configures Dial (and pool.Dial). The delivery options (Buffer,
// Overflow, PendingBytes) are Options too: given to Dial they set the
// default of every subscription.
type Option interface{ applyClient(*config) }

// clientOption is an Option that sets the client's config.
type clientOption func(*config)

func (f clientOption) applyClient(c *config) { f(c) }

type config struct {
	tap              FrameTap   // nil without WithFrameTap
	copyFilter       CopyFilter // nil without WithCopyFilter
	protocol         protocol.Protocol
	header           http.Header
	dialer           *websocket.Dialer
	tls              *tls.Config
	logger           *zap.Logger
	registerer       prometheus.Registerer
	metricsName      string
	backoff          func() backoff.BackOff
	healthyAfter     time.Duration
	delivery         subConfig // every subscription's defaults: Buffer, Overflow, PendingBytes given to Dial
	retryFirst       bool
	noCallRetry      bool          // WithReadOnlyRetry(false)
	headLag          int           // WithHeadLag: a Standby's
	probeEvery       time.Duration // WithSwitchBack
	switchAfter      time.Duration
	leg              bool // a standby.Standby's leg (AsLeg): the Standby takes its endpoint back
	endpointBase     int  // a Standby's leg: its own endpoint's index in the Standby's list (endpoints.go)
	readLimit        int64
	stamps           bool             // WithStamps
	now              func() time.Time // the reader's clock; nil: time.Now (tests set a fake one)
	pingInterval     time.Duration
	backfill         int      // WithBackfill
	endpoints        []string // WithEndpoints
	pongTimeout      time.Duration
	idleTimeout      time.Duration
	requestTimeout   time.Duration
	dialTimeout      time.Duration
	writeTimeout     time.Duration
	resubscribeChunk int
	resubscribeGap   bool
	onConnect        OnConnect
	eventBuffer      int
	staleFactor      int              // stale.go; 0: off
	staleFloor       time.Duration    // stale.go
	pace             *pace.Pacer      // pace.go; nil without limits
	paceSet          bool             // WithRateLimit was given: the exchange's limits are not applied
	connectLimits    []connpace.Limit // the venue's pace of new connections to a host (connect.go)
	err              error            // an option's value refused, returned by Dial
}

func defaultConfig() config {
	return config{
		logger:         zap.NewNop(),
		metricsName:    "default",
		headLag:        DefaultHeadLag,
		probeEvery:     DefaultProbeEvery,
		switchAfter:    DefaultSwitchAfter,
		backoff:        reconnectWait(defaultFirstWait, defaultMaxWait),
		healthyAfter:   time.Second,
		delivery:       subConfig{buffer: 1024, overflow: DropOldest, pendingBytes: 64 << 20, grace: DefaultGrace},
		readLimit:      32 << 20,
		pingInterval:   time.Second,
		backfill:       defaultBackfill,
		pongTimeout:    3 * time.Second,
		requestTimeout: 30 * time.Second,
		dialTimeout:    5 * time.Second,
		writeTimeout:   10 * time.Second,
		eventBuffer:    256,
		staleFactor:    10,
		staleFloor:     5 * time.Second,
	}
}

// The default reconnect waits: the first about 100ms, doubling to at
// most 2s, jitter included.
const (
	defaultFirstWait = 100 * time.Millisecond
	defaultMaxWait   = 2 * time.Second
)

// reconnectWait makes backoffs growing from about first to at most most,
// doubling, each wait drawn within ±50% of its step: the steps stop at
// most/1.5, so even the longest draw is within most.
func reconnectWait(first, most time.Duration) func() backoff.BackOff {
	return func() backoff.BackOff {
		b := backoff.NewExponentialBackOff()
		b.InitialInterval = first
		b.RandomizationFactor = 0.5
		b.Multiplier = 2
		b.MaxInterval = time.Duration(float64(most) / (1 + b.RandomizationFactor))
		b.InitialInterval = min(b.InitialInterval, b.MaxInterval)
		b.MaxElapsedTime = 0
		b.Reset()
		return b
	}
}

// WithProtocol sets the wire dialect: an exchange package's client half,
// such as thalex.Protocol() or deribit.Protocol(). Required: Dial refuses
// to guess the exchange.
func WithProtocol(p protocol.Protocol) Option {
	return clientOption(func(c *config) { c.protocol = p })
}

// WithHeader adds HTTP headers to the WebSocket handshake. Default: none.
func WithHeader(h http.Header) Option { return clientOption(func(c *config) { c.header = h.Clone() }) }

// WithDialer sets the gorilla dialer whose proxy, buffer sizes and
// handshake timeout are used. Default: a dialer with 64 KiB read and
// write buffers and the proxy from the environment.
func WithDialer(d *websocket.Dialer) Option { return clientOption(func(c *config) { c.dialer = d }) }

// WithTLSConfig sets the TLS configuration for wss:// URLs. Default: Go's.
func WithTLSConfig(t *tls.Config) Option { return clientOption(func(c *config) { c.tls = t }) }

// WithLogger sets the logger for state changes and errors (never one line
// per frame). Default: zap.NewNop().
func WithLogger(l *zap.Logger) Option { return clientOption(func(c *config) { c.logger = l }) }

// WithMetrics registers wsfan_client_* metrics on r, labelled with
// connection=name. Default: no metrics.
func WithMetrics(r prometheus.Registerer, name string) Option {
	return clientOption(func(c *config) { c.registerer, c.metricsName = r, name })
}

// WithBackoff sets the reconnect backoff; a fresh one is made per outage,
// and backoff.Stop ends reconnecting (the client then closes with
// ErrConnectionLost). Default: WithReconnectWait(100ms, 2s).
func WithBackoff(f func() backoff.BackOff) Option {
	return clientOption(func(c *config) { c.backoff = f })
}

// WithReconnectWait sets the waits between reconnect attempts: about
// first, doubling on each failed attempt, each drawn within ±50% of its
// step and never over most, jitter included; most <= 0 keeps the default.
// After a network heals the client is back within most plus one dial (a
// dial already under way on the dead network runs out its dial timeout
// first). Default: 100ms to 2s.
func WithReconnectWait(first, most time.Duration) Option {
	return clientOption(func(c *config) {
		if most <= 0 {
			most = defaultMaxWait
		}
		c.backoff = reconnectWait(max(first, time.Millisecond), most)
	})
}

// WithHealthyAfter sets how long a connection must stay up, once it has
// restored every subscription, before the next outage starts again from
// the first wait: until then it continues the waits where the last
// outage left them, so a server that accepts connections and drops them
// at once is dialed at most once per max wait, never in a tight loop.
// Default: 1s.
func WithHealthyAfter(d time.Duration) Option {
	return clientOption(func(c *config) { c.healthyAfter = d })
}

// WithRetryOnFailedConnect makes Dial return at once even when the
// first connection cannot be made: the client keeps dialing with the
// reconnect backoff. While no connection is up, before the first or
// during a reconnect, Subscribe does not wait: it queues its topics and
// returns, and the next connection's restore subscribes them (a topic
// refused then ends its subscription with a *RefusedError on Err; one
// queued during a reconnect has its first message flagged
// FlagReconnected). Calls fail at once with ErrConnectionLost, naming
// the last failure, until connected. Default: off: Dial fails if the
// first dial does, and Subscribe waits for a reconnect within its ctx.
func WithRetryOnFailedConnect() Option { return clientOption(func(c *config) { c.retryFirst = true }) }

// WithReadOnlyRetry sets whether a call the dialect names read-only
// (protocol.MethodClass.ReadOnly) whose connection dies before its answer is made
// again on the next connection (a Standby's: on another leg), within
// the caller's context. A program that makes calls on others' behalf and
// cannot know their deadlines (the sidecar, forwarding its programs'
// calls) turns it off: the call then fails with ErrConnectionLost, as
// any other call does, and its caller decides. Default: on.
func WithReadOnlyRetry(on bool) Option {
	return clientOption(func(c *config) { c.noCallRetry = !on })
}

// WithReadLimit sets the largest frame accepted; a larger one is discarded,
// counted and logged, and the connection stays up. Default: 32 MiB.
func WithReadLimit(n int64) Option { return clientOption(func(c *config) { c.readLimit = n }) }

// WithPing sets the WebSocket ping interval and the pong timeout, which
// is also the lag threshold. Each ping carries its send time and its pong
// gives the round trip (Lag, the Lagging event, wsfan_client_lag_seconds).
// A link that answers nothing is dropped as dead within interval +
// timeout, and so is one whose pongs come back later than timeout behind
// its data (a slow link's backlog); the error (ErrDeadPeer) says which.
// Data arriving does not stand in for pongs: a link lagging behind still
// delivers data. interval 0 disables pings. Default: 1s, 3s, so a dead
// or black-holed link is noticed within 4s.
func WithPing(interval, timeout time.Duration) Option {
	return clientOption(func(c *config) { c.pingInterval, c.pongTimeout = interval, timeout })
}

// WithIdleTimeout drops a connection on which no frame arrived for d.
// Default: 0, off (quiet feeds are normal; pings catch dead peers).
func WithIdleTimeout(d time.Duration) Option {
	return clientOption(func(c *config) { c.idleTimeout = d })
}

// WithRequestTimeout bounds every Call and Subscribe whose context has no
// earlier deadline, and every acknowledgement on reconnect. Default: 30s.
func WithRequestTimeout(d time.Duration) Option {
	return clientOption(func(c *config) { c.requestTimeout = d })
}

// WithDialTimeout bounds each dial, handshake included. Default: 5s.
func WithDialTimeout(d time.Duration) Option {
	return clientOption(func(c *config) { c.dialTimeout = d })
}

// WithWriteTimeout bounds each write to the connection. Default: 10s.
func WithWriteTimeout(d time.Duration) Option {
	return clientOption(func(c *config) { c.writeTimeout = d })
}

// WithResubscribeChunk sets how many topics one subscribe or unsubscribe
// request (or one batch array) carries, a restore's included, for a
// server whose cap differs from its exchange's documented one. Every
// chunk of a round still goes out in one write. Default: 0, the
// dialect's own limit (deribit.MaxChannels and deribit.MaxFrameBytes,
// ethereum.MaxBatch; none for Thalex and Ethereal).
func WithResubscribeChunk(n int) Option {
	return clientOption(func(c *config) { c.resubscribeChunk = n })
}

// WithResubscribeOnGap resubscribes a sequenced topic (Deribit book,
// Ethereal L2Book) when a gap is detected, so the server sends a fresh
// snapshot. Default: false (the Gap event and flag are still raised).
func WithResubscribeOnGap(on bool) Option {
	return clientOption(func(c *config) { c.resubscribeGap = on })
}

// WithOnConnect sets a hook run on every connection before subscriptions
// are restored. Default: none.
func WithOnConnect(f OnConnect) Option { return clientOption(func(c *config) { c.onConnect = f }) }

// WithEventBuffer sets the capacity of the Events channel; when it is
// full the oldest event is dropped. Default: 256.
func WithEventBuffer(n int) Option { return clientOption(func(c *config) { c.eventBuffer = n }) }

// WithStaleAfter sets when a topic is stale: silent for factor times its
// median interval (over its last 16, messages closer than floor/(2 factor)
// counted as one), and at least floor, while other
// topics of the connection flow. A stale topic raises a Stale event,
// counts in wsfan_client_stale_total and is resubscribed once; its next
// message is flagged FlagStale. It is judged again after its next
// message. factor 0 turns it off. Default: 10, 5s.
func WithStaleAfter(factor int, floor time.Duration) Option {
	return clientOption(func(c *config) { c.staleFactor, c.staleFloor = factor, floor })
}
