package sidecar

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/wsfan/wsfan/internal/redact"
	"github.com/wsfan/wsfan/pkg/client"
)

// feed is one upstream subscription as a topic's pump reads it.
// *client.Subscription is one; another upstream source provides its own.
type feed interface {
	// C delivers the messages; it is closed when the subscription ends.
	C() <-chan client.Message
	// Err yields why the subscription ended, nil after Unsubscribe.
	Err() <-chan error
	// Dropped counts messages lost because the pump fell behind.
	Dropped() uint64
	// Unsubscribe ends the subscription upstream.
	Unsubscribe(ctx context.Context) error
}

// subscribeFunc subscribes topics upstream, a feed each, in as few
// requests as the upstream allows, waiting out an outage within ctx:
// feeds[i] is topics[i]'s, or nil with errs[i] saying why; err is for the
// whole call. The hub opens the topics one local request asks for with
// one call.
type subscribeFunc func(ctx context.Context, topics []string) (feeds []feed, errs []error, err error)

// oneByOne makes a subscribeFunc of a function subscribing one topic:
// for a source that has no batched subscribe.
func oneByOne(subscribe func(ctx context.Context, topic string) (feed, error)) subscribeFunc {
	return func(ctx context.Context, topics []string) ([]feed, []error, error) {
		feeds, errs := make([]feed, len(topics)), make([]error, len(topics))
		for i, topic := range topics {
			feeds[i], errs[i] = subscribe(ctx, topic)
		}
		return feeds, errs, nil
	}
}

// callFunc makes an RPC call upstream and returns the raw result,
// waiting for the upstream within ctx. Local clients' forwarded calls
// go through one.
type callFunc func(ctx context.Context, method string, params json.RawMessage) ([]byte, error)

// upstream owns the one client connected to the real server. Its goroutine
// dials (retrying until it succeeds, so the sidecar may start before the
// upstream) and then watches the client's events. Its subscribe and call
// methods are the hub's subscribeFunc and the local clients' callFunc.
type upstream struct {
	// Set by newUpstream, read only after.
	url   string // may hold a key: logged only as redact.URL(url)
	opts  []client.Option
	stats *stats // reconnects, calls, call errors
	log   *zap.Logger

	issues trouble // the last failure and the attempts since

	// mu protects the following.
	mu      sync.Mutex
	c       *client.Client // nil until the first dial succeeds
	changed chan struct{}  // closed and replaced whenever c or its state changes
}

func newUpstream(url string, opts []client.Option, st *stats, log *zap.Logger) *upstream {
	return &upstream{url: url, opts: opts, stats: st, log: log, changed: make(chan struct{})}
}

// run is the upstream goroutine: it dials, then relays the client's events
// until the client is closed.
func (u *upstream) run(ctx context.Context) {
	log := u.log
	delay := 100 * time.Millisecond
	attempts := 0
	var c *client.Client
	for {
		var err error
		c, err = client.Dial(ctx, u.url, u.opts...)
		if err == nil {
			break
		}
		log.Warn("upstream dial failed; retrying", zap.Error(err), zap.Duration("in", delay))
		attempts++
		u.issues.failed(err, attempts, time.Now().Add(delay))
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
		delay = min(2*delay, 10*time.Second)
	}
	log.Info("upstream connected", zap.String("url", redact.URL(u.url)))
	u.issues.up()
	u.mu.Lock()
	if ctx.Err() != nil { // close ran before c was stored: it is ours to close
		u.mu.Unlock()
		_ = c.Close()
		return
	}
	u.c = c
	u.notifyLocked()
	u.mu.Unlock()

	events := c.Events()
	for {
		var ev client.Event
		var ok bool
		select {
		case ev, ok = <-events:
		case <-ctx.Done(): // do not rely on Close closing Events
		}
		if !ok {
			return
		}
		switch ev.Kind {
		case client.Disconnected:
			u.stats.reconnects.Add(1)
			u.issues.failed(ev.Err, 0, time.Time{})
			log.Warn("upstream disconnected", zap.Error(ev.Err))
		case client.Reconnecting:
			u.issues.failed(ev.Err, ev.Attempt, ev.Time.Add(ev.Wait))
		case client.Connected:
			u.issues.up()
		case client.Resubscribed:
			log.Info("upstream reconnected", zap.Int("topics", ev.Topics))
		case client.Gap:
			log.Debug("upstream gap", zap.String("topic", ev.Topic))
		}
		u.mu.Lock()
		u.notifyLocked()
		u.mu.Unlock()
	}
}

func (u *upstream) notifyLocked() {
	close(u.changed)
	u.changed = make(chan struct{})
}

// close closes the client; ctx (run's) must be cancelled already.
func (u *upstream) close() {
	u.mu.Lock()
	c := u.c
	u.mu.Unlock()
	if c != nil {
		_ = c.Close()
	}
}

// client returns the client, or nil before the first connection.
func (u *upstream) client() *client.Client {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.c
}

// state returns the upstream state: a client.State, or connecting before
// the first connection.
func (u *upstream) state() client.State {
	if c := u.client(); c != nil {
		return c.State()
	}
	return client.StateConnecting
}

// resync resubscribes topic on the upstream client, so the exchange
// sends its snapshot again (client.Client.Resync).
func (u *upstream) resync(topic string) bool {
	u.mu.Lock()
	c := u.c
	u.mu.Unlock()
	return c != nil && c.Resync(topic)
}

// trouble is the upstream's last failure and attempts.
func (u *upstream) trouble() *trouble { return &u.issues }

// group is nil: this upstream is the sidecar's own.
func (u *upstream) group() *GroupStatus { return nil }

// connected waits until the upstream is connected.
func (u *upstream) connected(ctx context.Context) (*client.Client, error) {
	for {
		u.mu.Lock()
		c, changed := u.c, u.changed
		u.mu.Unlock()
		if c != nil {
			switch c.State() {
			case client.StateConnected:
				return c, nil
			case client.StateClosed:
				return nil, ErrClosed
			}
		}
		// Events may be dropped when nobody reads them fast enough, so
		// the wait is also bounded by a short poll.
		select {
		case <-changed:
		case <-time.After(50 * time.Millisecond):
		case <-ctx.Done():
			return nil, fmt.Errorf("upstream not connected (%s): %w", u.state(), ctx.Err())
		}
	}
}

// subscribe subscribes topics upstream in one round of requests
// (client.SubscribeEach), a feed each, waiting for the upstream to be
// connected; an outage during the subscribe is waited out too.
func (u *upstream) subscribe(ctx context.Context, topics []string) ([]feed, []error, error) {
	for {
		c, err := u.connected(ctx)
		if err != nil {
			return nil, nil, err
		}
		subs, errs, err := c.SubscribeEach(ctx, topics)
		if err == nil {
			feeds := make([]feed, len(subs))
			for i, sub := range subs {
				if sub != nil {
					feeds[i] = sub
				}
			}
			return feeds, errs, nil
		}
		if !errors.Is(err, client.ErrConnectionLost) || ctx.Err() != nil {
			return nil, nil, err
		}
	}
}

// call makes a call upstream once the upstream is connected, and never
// retries a call that may have been sent.
func (u *upstream) call(ctx context.Context, method string, params json.RawMessage) ([]byte, error) {
	c, err := u.connected(ctx)
	if err != nil {
		return u.stats.countCall(nil, err)
	}
	return u.stats.countCall(c.CallRaw(ctx, method, params))
}
