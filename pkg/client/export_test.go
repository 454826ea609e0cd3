package client

import (
	"context"
	"time"

	"github.com/wsfan/wsfan/internal/cadence"
	"github.com/wsfan/wsfan/internal/pending"
	"github.com/wsfan/wsfan/internal/recovery"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// This file opens the reader's hot path to the package's benchmarks
// without a network, so they time classify + route alone.

// newBenchClient is a client with no connection or goroutines: the
// topic table and the routing the reader uses, nothing else.
func newBenchClient(p protocol.Protocol, opts ...Option) *Client {
	cfg := defaultConfig()
	cfg.protocol = p
	for _, o := range opts {
		o.applyClient(&cfg)
	}
	c := &Client{
		cfg:          cfg,
		proto:        p,
		log:          cfg.logger,
		subs:         make(map[*Subscription]struct{}),
		events:       make(chan Event, 1),
		cadenceEvery: cadence.Every(cfg.staleFactor, cfg.staleFloor), // as Dial sets it
	}
	c.recovery = recovery.New[Message](recoveryHost{c}, c.venue, cfg.backfill, c.log)
	if cfg.registerer != nil { // the collector, unregistered: the reader's metrics alone
		c.metrics = newCollector(c, cfg.metricsName)
	}
	return c
}

// newBenchConn is a connection with no socket: the reader's frame
// handling and pending table, nothing else.
func newBenchConn(c *Client) *conn {
	return &conn{c: c, pending: pending.NewTable(), wake: make(chan struct{}, 1), done: make(chan struct{})}
}

// subscribeLocal attaches a subscription to topics as if the server had
// acknowledged them.
func (c *Client) subscribeLocal(topics ...string) *Subscription {
	names, parsed, err := c.parseTopics(topics)
	if err != nil {
		panic(err)
	}
	s := newSubscription(c, names, c.subscribeConfig(nil), channelSlots)
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, name := range names {
		ts := c.topics.get(name)
		if ts == nil {
			ts = c.openTopic(parsed[i])
			ts.confirmed = true
			c.topics.add(ts)
		}
		ts.attach(s)
		s.states = append(s.states, ts)
	}
	c.subs[s] = struct{}{}
	return s
}

// The benchmarks of the reader's hot path and of the restore round run in
// package client_test, where the exchange packages can be imported (they
// import this one for their login hooks); these wrappers open the
// internals they time. Each is a call the compiler inlines.

// NewBenchClient is newBenchClient for client_test.
func NewBenchClient(p protocol.Protocol, opts ...Option) *Client { return newBenchClient(p, opts...) }

// BenchConn is a connection with no socket (newBenchConn).
type BenchConn struct{ cn *conn }

// NewBenchConn is newBenchConn for client_test.
func NewBenchConn(c *Client) BenchConn { return BenchConn{newBenchConn(c)} }

// HandleFrame runs the reader's handling of one frame it read at now.
func (b BenchConn) HandleFrame(frame []byte, now time.Time) { b.cn.took(frame, now) }

// BenchCall is a pending call a benchmark registers and waits for.
type BenchCall struct{ p *pending.Call }

// NewBenchCall returns a pending call whose answer can be waited for.
func NewBenchCall() BenchCall { return BenchCall{&pending.Call{Done: make(chan pending.Response, 1)}} }

// Pend registers call under id in the connection's pending table.
func (b BenchConn) Pend(id uint64, call BenchCall) { _ = b.cn.pending.Add(id, call.p) }

// Wait waits for the call's answer.
func (call BenchCall) Wait() { <-call.p.Done }

// SubscribeLocal is subscribeLocal for client_test.
func (c *Client) SubscribeLocal(topics ...string) *Subscription { return c.subscribeLocal(topics...) }

// DeliveredTotal is the count of messages delivered to subscriptions.
func (c *Client) DeliveredTotal() uint64 { return c.stats.delivered.Load() }

// QueueRestore queues the restore round of every confirmed topic on b, as
// a reconnect does, then forgets it as a lost connection would; it
// returns the topics restored and the frames queued.
func (c *Client) QueueRestore(b BenchConn) (topics, frames int, err error) {
	cn := b.cn
	states, _, _, err := c.queueRestore(context.Background(), cn, &c.restoreRound, false, nil)
	cn.wmu.Lock()
	frames = len(cn.queue)
	clear(cn.queue)
	cn.queue = cn.queue[:0]
	cn.wmu.Unlock()
	c.restoreRound.forget(cn)
	c.restoreRound.release()
	return len(states), frames, err
}

// WriterTookAll reports whether a call is pending and the writer has
// taken every queued frame: it is writing them, or blocked writing.
func WriterTookAll(c *Client) bool {
	cn := c.conn.Load()
	return cn != nil && cn.queueLen() == 0 && cn.pending.Len() > 0
}
