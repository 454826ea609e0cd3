package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
	"go.uber.org/zap"

	"github.com/wsfan/wsfan/internal/cadence"
	"github.com/wsfan/wsfan/internal/endpoints"
	"github.com/wsfan/wsfan/internal/recovery"
	"github.com/wsfan/wsfan/internal/redact"

	"github.com/wsfan/wsfan/pkg/protocol"
)

// Client is a connection to a streaming JSON API that stays up for as long
// as the user wants it. It is safe for concurrent use.
type Client struct {
	// eps are the endpoints and the one in use or being dialled
	// (endpoints.go), changed by the supervisor (and Dial); swaps hands
	// it SetEndpoints' requests (setendpoints.go).
	eps    *endpoints.List
	swaps  chan *endpointSwap
	seq    uint64        // the Client's number in the process (ConnInfo.Client)
	conns  atomic.Uint64 // connections dialled, numbering them (ConnInfo.Conn)
	cfg    config
	proto  protocol.Protocol
	log    *zap.Logger
	dialer websocket.Dialer

	stats   stats
	metrics *collector // nil without WithMetrics
	// venue is what the dialect's venue is and decides by, read once by
	// Dial (protocol.Venue); nothing changes it after.
	venue protocol.Venue
	// holdOff is the earliest time (unix ns) to reconnect after a
	// refusal that ended the session (sessionend.go).
	holdOff atomic.Int64
	// settings are the session settings the program made
	// (sessionsettings.go).
	settings sessionSettings
	// lag is the last ping round trip in nanoseconds (liveness.go),
	// written by the reader, 0 while disconnected.
	lag atomic.Int64
	// ponged is the send time (UnixNano) of the last ping answered on
	// the current connection, or when it started; written by its reader
	// (liveness.go).
	ponged atomic.Int64
	// lastFailure is why the last connection ended or the last dial
	// failed, for the errors of calls made while none is up; written by
	// the supervisor (and Dial's first attempt).
	lastFailure atomic.Pointer[error]
	// cadenceEvery is how far apart a topic's messages are recorded for
	// judging it stale (stale.go); set by Dial, read by the reader.
	cadenceEvery int64
	// upSince is when the current connection was handed out (unix ns),
	// for judging silent topics (stale.go); set by the supervisor.
	upSince atomic.Int64
	// stalled is set by the reader when a consumer held it up (Block,
	// or the grace wait), so it re-arms the read deadline after.
	stalled atomic.Bool
	ids     atomic.Uint64
	state   atomic.Int32
	// batchLimit is the batch size the server was found to take, once it
	// refused a larger one as too large (ops.go, learnBatchLimit); 0 until
	// then.
	batchLimit atomic.Int32
	// answers is what the server was seen to answer, for a dialect whose
	// answers carry no id (protocol.Venue.AcceptAfter): answersUnknown
	// until its first success (answersAll) or its first silence taken for
	// acceptance (answersRefusalsOnly). Kept across connections: the
	// server does not change.
	answers atomic.Int32

	// conn is the live connection, or nil between connections. The
	// supervisor goroutine sets and clears it, and wakes connSet's
	// waiters when it hands one out.
	conn    atomic.Pointer[conn]
	connSet broadcast
	// handover is set while the supervisor takes the preferred endpoint
	// back and two connections deliver (handover.go); both readers read
	// it. handoverMu is held by the supervisor from the new connection's
	// subscribes to the switch (it only tries it) and read-held by every
	// subscribe and unsubscribe, so none runs across the switch. The
	// supervisor's, under mu: newKeys, the routing keys the new
	// connection's server assigned; oldKeys, those the left connection's
	// did.
	handover   atomic.Pointer[handover]
	handoverMu sync.RWMutex
	newKeys    []routedKey
	oldKeys    []routedKey

	// mu protects the topic table (its routes are also read by the
	// reader without locking: topictable.go) and the subscription set, and orders
	// every subscribe and unsubscribe frame written: whoever changes what
	// the server should send also queues the frame, under mu.
	mu     sync.Mutex
	topics topicTable
	subs   map[*Subscription]struct{}
	up     bool // a connection was handed out once; conn is set under mu

	// restoreRound is the reused memory of every restore; whoever connects
	// owns it (Dial's goroutine, then the supervisor), one restore at a
	// time. A restore starts only after the previous one's connection
	// failed and conn.wait returned (see opRound).
	restoreRound opRound

	eventsMu     sync.Mutex // serializes the drop-oldest send on events, and closing it
	events       chan Event
	eventsClosed bool // eventsMu protects it

	ctx       context.Context // cancelled by Close: aborts dials and waits
	cancel    context.CancelFunc
	closeOnce sync.Once
	done      chan struct{}  // closed when the supervisor has finished
	wg        sync.WaitGroup // goroutines other than connections' own

	// recovery fills in what Backfill topics missed during a reconnect
	// and follows their chains (recovery.go); set by Dial.
	recovery *recovery.Recovery[Message]
}

// Dial connects to url and returns once the connection is up. It fails if
// the first connection cannot be made; after that the client reconnects
// by itself until Close. A user:password@ in url is sent as an
// "Authorization: Basic" header (unless WithHeader sets Authorization).
// Logs and errors show url redacted: no userinfo, no query values, no path
// segment that looks like a key.
func Dial(ctx context.Context, url string, opts ...Option) (*Client, error) {
	cfg := defaultConfig()
	for _, o := range opts {
		o.applyClient(&cfg)
	}
	if cfg.err != nil {
		return nil, cfg.err
	}
	if cfg.protocol == nil {
		return nil, errors.New("client: no protocol: pass WithProtocol with an exchange package's Protocol(), such as WithProtocol(thalex.Protocol())")
	}
	for _, u := range append([]string{url}, cfg.endpoints...) {
		if err := checkURL(u); err != nil {
			return nil, err
		}
	}
	venue := cfg.protocol.Venue()
	if venue.Invalid != nil {
		return nil, venue.Invalid
	}
	cfg.exchangeLimits(venue.Limits)
	c := &Client{
		eps:    endpoints.New(endpointsOf(url, cfg.endpoints, askStamps(cfg.header, cfg.stamps)), cfg.endpointBase),
		seq:    clientSeq.Add(1),
		cfg:    cfg,
		proto:  cfg.protocol,
		venue:  venue,
		log:    cfg.logger.With(zap.String("url", redact.URL(url)), zap.String("protocol", cfg.protocol.Name())),
		subs:   make(map[*Subscription]struct{}),
		events: make(chan Event, max(cfg.eventBuffer, 1)),
		done:   make(chan struct{}),
		swaps:  make(chan *endpointSwap),
	}
	c.cadenceEvery = cadence.Every(cfg.staleFactor, cfg.staleFloor)
	c.recovery = recovery.New[Message](recoveryHost{c}, venue, cfg.backfill, c.log)
	c.dialer = defaultDialer()
	if cfg.dialer != nil {
		c.dialer = *cfg.dialer
	}
	if cfg.tls != nil {
		c.dialer.TLSClientConfig = cfg.tls
	}
	if cfg.registerer != nil {
		c.metrics = newCollector(c, cfg.metricsName)
		if err := cfg.registerer.Register(c.metrics); err != nil {
			return nil, fmt.Errorf("failed to register metrics: %w", err)
		}
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.state.Store(int32(StateConnecting))

	cn, err := c.connect(ctx, false)
	for i := 1; i < c.eps.Len() && err != nil && ctx.Err() == nil; i++ {
		c.log.Warn("endpoint failed; dialling the next", zap.String("endpoint", c.eps.Get(i-1).Shown), zap.Error(err))
		c.eps.Use(i) // the next endpoint, at once
		cn, err = c.connect(ctx, false)
	}
	if err != nil && cfg.retryFirst && ctx.Err() == nil {
		c.log.Warn("first connect failed; retrying", zap.Error(err))
		c.lastFailure.Store(&err)
		c.setState(StateReconnecting)
		c.wg.Add(1)
		go c.supervise(nil, err)
		return c, nil
	}
	if err != nil {
		c.cancel()
		if c.metrics != nil {
			cfg.registerer.Unregister(c.metrics)
		}
		return nil, err
	}
	c.wg.Add(1)
	go c.supervise(cn, nil)
	return c, nil
}

func defaultDialer() websocket.Dialer {
	return websocket.Dialer{
		Proxy:            http.ProxyFromEnvironment,
		ReadBufferSize:   64 << 10,
		WriteBufferSize:  64 << 10,
		HandshakeTimeout: 0, // the dial timeout bounds the whole dial
	}
}

// Close ends the client: every pending call fails with ErrClosed, every
// subscription channel is closed, the Events channel is closed, and every
// goroutine has exited when it returns. It is safe to call more than once.
func (c *Client) Close() error {
	c.closeOnce.Do(func() {
		c.cancel()
		if cn := c.conn.Load(); cn != nil {
			cn.fail(ErrClosed)
		}
		<-c.done
		c.wg.Wait()
		if c.metrics != nil {
			c.cfg.registerer.Unregister(c.metrics)
		}
	})
	return nil
}

// closed reports whether Close was called (or reconnecting gave up).
func (c *Client) closed() bool { return c.ctx.Err() != nil }

// Protocol is the client's wire dialect (WithProtocol).
func (c *Client) Protocol() protocol.Protocol { return c.proto }

// State returns the connection state.
func (c *Client) State() State { return State(c.state.Load()) }

func (c *Client) setState(s State) { c.state.Store(int32(s)) }

// Events returns the channel of connection and integrity events. It is
// closed by Close. When nobody reads it the oldest events are dropped.
func (c *Client) Events() <-chan Event { return c.events }

// emit sends ev, dropping the oldest queued event when the channel is full.
func (c *Client) emit(ev Event) {
	ev.Time = time.Now()
	c.eventsMu.Lock()
	defer c.eventsMu.Unlock()
	if c.eventsClosed {
		return
	}
	c.stats.eventsDrops.Add(uint64(sendDropOldest(c.events, ev)))
}

// sendDropOldest sends ev on ch, dropping the oldest queued events while
// ch is full, and returns how many it dropped. Its callers serialize
// their sends and the close of ch.
func sendDropOldest(ch chan Event, ev Event) (dropped int) {
	for {
		select {
		case ch <- ev:
			return dropped
		default:
		}
		select {
		case <-ch:
			dropped++
		default:
		}
	}
}

// closeEvents closes the Events channel once; later events are dropped.
func (c *Client) closeEvents() {
	c.eventsMu.Lock()
	defer c.eventsMu.Unlock()
	if !c.eventsClosed {
		c.eventsClosed = true
		close(c.events)
	}
}

// activeConn returns the connection a call with ctx uses: the one being
// set up for the on-connect hook's calls, else the live one, or why there
// is none.
func (c *Client) activeConn(ctx context.Context) (*conn, error) {
	if cn, ok := ctx.Value(connectingKey{}).(*conn); ok {
		return cn, nil
	}
	if cn := c.conn.Load(); cn != nil {
		return cn, nil
	}
	if c.closed() {
		return nil, ErrClosed
	}
	if cause := c.lastFailure.Load(); cause != nil {
		return nil, fmt.Errorf("%w: not connected (%s): %w", ErrConnectionLost, c.State(), *cause)
	}
	return nil, fmt.Errorf("%w: not connected (%s)", ErrConnectionLost, c.State())
}

// awaitConn returns the live connection, waiting for the next one while
// the client reconnects, until ctx ends or the client is closed.
func (c *Client) awaitConn(ctx context.Context) (*conn, error) {
	for {
		next := c.connSet.wait() // before looking, so no hand-out is missed
		cn, err := c.activeConn(ctx)
		if err == nil || errors.Is(err, ErrClosed) {
			return cn, err
		}
		select {
		case <-next:
		case <-c.ctx.Done():
			return nil, ErrClosed
		case <-ctx.Done():
			return nil, fmt.Errorf("%w, waited for it: %w", err, ctxError(ctx, "wait for the connection"))
		}
	}
}

// awaitNewConn waits, within ctx, for a connection other than old to be
// handed out.
func (c *Client) awaitNewConn(ctx context.Context, old *conn) (*conn, error) {
	for {
		next := c.connSet.wait() // before looking, so no hand-out is missed
		if cn := c.conn.Load(); cn != nil && cn != old {
			return cn, nil
		}
		select {
		case <-next:
		case <-c.ctx.Done():
			return nil, ErrClosed
		case <-ctx.Done():
			return nil, ctxError(ctx, "wait for a new connection")
		}
	}
}

// broadcast wakes every waiter at once: wait returns a channel that
// notify closes. The zero value is ready to use.
type broadcast struct {
	mu sync.Mutex
	ch chan struct{}
}

func (b *broadcast) wait() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ch == nil {
		b.ch = make(chan struct{})
	}
	return b.ch
}

func (b *broadcast) notify() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ch != nil {
		close(b.ch)
		b.ch = nil
	}
}

func (c *Client) nextID() uint64 { return c.ids.Add(1) }

// withTimeout bounds ctx by the request timeout unless it ends earlier.
func (c *Client) withTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	if d, ok := ctx.Deadline(); ok && time.Until(d) <= c.cfg.requestTimeout {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, c.cfg.requestTimeout)
}

func (c *Client) pendingCalls() int {
	if cn := c.conn.Load(); cn != nil {
		return cn.pending.Len()
	}
	return 0
}

// holds reports whether topic is in the client's table.
func (c *Client) holds(topic string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.topics.get(topic) != nil
}

func (c *Client) counts() (subs, topics int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.subs), c.topics.len()
}
