package client

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/gorilla/websocket"
	"github.com/wsfan/wsfan/internal/pace"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// The seams of a composite whose connections (legs) carry the same
// subscriptions side by side (package standby): what the options of its
// legs set (Settings), the request budget they share (Budget), a client
// dialled as one of them (AsLeg), and what the composite asks of a leg
// beyond a Client's public face (Leg).

// Settings is what a list of options sets, read by a composite before
// it dials its connections with them.
type Settings struct{ cfg config }

// Resolve applies opts as Dial does and returns what they set, or the
// error of the first option that was refused.
func Resolve(opts ...Option) (Settings, error) {
	cfg := defaultConfig()
	for _, o := range opts {
		o.applyClient(&cfg)
	}
	if cfg.err != nil {
		return Settings{}, cfg.err
	}
	return Settings{cfg: cfg}, nil
}

// Dialer is the gorilla dialer the client dials with: WithDialer's, or
// the default one (a copy: setting its fields changes nothing here).
func (s Settings) Dialer() websocket.Dialer {
	if s.cfg.dialer != nil {
		return *s.cfg.dialer
	}
	return defaultDialer()
}

// Protocol is the dialect (WithProtocol).
func (s Settings) Protocol() protocol.Protocol { return s.cfg.protocol }

// Endpoints are the endpoints after Dial's URL (WithEndpoints).
func (s Settings) Endpoints() []string { return slices.Clone(s.cfg.endpoints) }

// SwitchBack is WithSwitchBack's period of probes and how long the
// preferred endpoint must answer them; every 0: off.
func (s Settings) SwitchBack() (every, after time.Duration) {
	return s.cfg.probeEvery, s.cfg.switchAfter
}

// RetryOnFailedConnect reports WithRetryOnFailedConnect.
func (s Settings) RetryOnFailedConnect() bool { return s.cfg.retryFirst }

// HeadLag is WithHeadLag's number of blocks.
func (s Settings) HeadLag() int { return s.cfg.headLag }

// Budget returns a new request budget holding the limits the options set
// (WithRateLimit, else the venue's documented ones: protocol.Venue.Limits),
// for clients that share it (WithBudget); the zero Budget when there are
// none. Each call makes another.
func (s Settings) Budget() Budget {
	cfg := s.cfg
	cfg.pace = nil
	cfg.exchangeLimits(cfg.protocol.Venue().Limits)
	return Budget{p: cfg.pace}
}

// Budget is a venue's request budget as clients pace their requests
// against it. Clients given one Budget (WithBudget) share it: the venue
// counts every connection's requests in one budget. The zero Budget is
// none. Budgets are comparable.
type Budget struct{ p *pace.Pacer }

// WithBudget makes the client pace its requests with b, shared with every
// client given b, in place of the limits of its own options. The zero
// Budget changes nothing.
func WithBudget(b Budget) Option {
	return clientOption(func(c *config) {
		if b.p != nil {
			c.pace, c.paceSet = b.p, true
		}
	})
}

// Budget is the request budget the client paces with; the zero Budget
// when it has none.
func (c *Client) Budget() Budget { return Budget{p: c.cfg.pace} }

// AsLeg makes the client a leg of a composite whose legs share one list
// of endpoints (a standby's): Dial's URL is the base-th of that list, and
// endpoints the others in the order this leg tries them. Endpoint, its
// events and ConnInfo count in the composite's list; it dials on at once
// when its first attempt fails (as WithRetryOnFailedConnect); and it
// never takes its preferred endpoint back by itself: its composite does,
// with Leg.SwitchBack, when another leg carries the stream meanwhile.
func AsLeg(base int, endpoints []string) Option {
	return clientOption(func(c *config) {
		c.retryFirst = true
		c.endpoints = slices.Clone(endpoints)
		c.leg = true
		c.endpointBase = base
	})
}

// Leg is what a composite asks of one of its legs (a client dialled
// AsLeg) beyond a Client's public face. Any goroutine may use it.
type Leg struct{ c *Client }

// LegOf is c's Leg.
func LegOf(c *Client) Leg { return Leg{c: c} }

// Head is the highest block the leg delivered on a chain topic
// (protocol.MessageReader.Link: an Ethereum node's newHeads), 0 when it holds none.
func (l Leg) Head() uint64 { return l.c.head() }

// Late reports whether the leg's pong is late past half the pong
// timeout, or its ping round trip that long: the link may be dying.
func (l Leg) Late(now time.Time) bool { return l.c.late(now) }

// Waiting reports whether a call on the leg's connection waits for its
// answer.
func (l Leg) Waiting() bool { return l.c.pendingCalls() != 0 }

// ReadOnly reports whether a call of method that lost its connection
// may be made again on another (protocol.MethodClass.ReadOnly, WithReadOnlyRetry).
func (l Leg) ReadOnly(method string) bool { return l.c.readOnly(method) }

// CheckSetting refuses a session setting the leg's pings are too rare to
// keep (see protocol.SessionSetting's MaxSilence), before it is made.
func (l Leg) CheckSetting(set protocol.SessionSetting, method string) error {
	return l.c.checkSetting(set, method)
}

// KeepSetting records a session setting, the call that makes it, for
// the leg to make on its next connection before carrying anything.
func (l Leg) KeepSetting(set protocol.SessionSetting, method string, params json.RawMessage) {
	l.c.settings.record(set, method, params)
}

// Connected returns nil while the leg is connected, and otherwise why
// not: ErrClosed, or ErrConnectionLost naming its last failure.
func (l Leg) Connected(ctx context.Context) error {
	_, err := l.c.activeConn(ctx)
	return err
}

// OnPreferred reports whether the leg is on (or dialling) its first
// endpoint: its own.
func (l Leg) OnPreferred() bool { return l.c.eps.OnPreferred() }

// Probe reports whether the leg's first endpoint answers a WebSocket
// handshake now (at the venue's pace of new connections).
func (l Leg) Probe(ctx context.Context) bool { return l.c.probe(ctx) }

// SwitchBack ends the leg's live connection, so that it dials its first
// endpoint again at once; it reports whether there was one to end. It
// ends none while a session setting holds on it (cancel-on-disconnect
// would cancel the orders placed on it).
func (l Leg) SwitchBack() bool { return l.c.switchBack() }

// DefaultHeadLag is how many blocks a standby's leg may be behind the
// highest head and still take calls (WithHeadLag).
const DefaultHeadLag = 2

// WithHeadLag sets how many blocks a standby's leg may be behind the
// leg with the highest head and still take calls: one further behind
// takes none until it catches up (package standby reads it: Settings).
// It applies to dialects whose heads form a chain (protocol.MessageReader.Link:
// Ethereum); the legs' heads are read from a newHeads subscription,
// which the program holds. Default: DefaultHeadLag (2).
func WithHeadLag(blocks int) Option {
	return clientOption(func(c *config) { c.headLag = max(blocks, 0) })
}

// head is the highest head the client delivered on a chain topic, 0
// when it holds none.
func (c *Client) head() uint64 {
	if c.venue.Recoverer == nil {
		return 0 // no chain topics
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var top uint64
	for _, ts := range c.topics.all() {
		if ts.rec != nil && !ts.topic.Retracts {
			top = max(top, ts.rec.Place())
		}
	}
	return top
}
