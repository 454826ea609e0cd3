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

// subscribeFunc subscribes topics upstream, a client.Stream each, in as few
// requests as the upstream allows, waiting out an outage within ctx:
// feeds[i] is topics[i]'s, or nil with errs[i] saying why; err is for the
// whole call. The hub opens the topics one local request asks for with
// one call.
type subscribeFunc func(ctx context.Context, topics []string) (feeds []client.Stream, errs []error, err error)

// unsubscribeFunc ends streams a subscribeFunc returned, in as few
// requests upstream as it can; it returns the first failure.
type unsubscribeFunc func(ctx context.Context, streams []client.Stream) error

// oneByOneUnsubscribe is an unsubscribeFunc for a source that has no
// batched unsubscribe: each stream's own Unsubscribe.
func oneByOneUnsubscribe(ctx context.Context, streams []client.Stream) error {
	var first error
	for _, s := range streams {
		if err := s.Unsubscribe(ctx); err != nil && !errors.Is(err, client.ErrUnsubscribed) && first == nil {
			first = err
		}
	}
	return first
}

// callFunc makes an RPC call upstream and returns the raw result,
// waiting for the upstream within ctx. Local clients' forwarded calls
// go through one.
type callFunc func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)

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
	c       *client.Client // nil until the first dial attempt ends
	wasUp   bool           // the client was connected once
	changed chan struct{}  // closed and replaced whenever c or its state changes
}

func newUpstream(url string, opts []client.Option, st *stats, log *zap.Logger) *upstream {
	return &upstream{url: url, opts: opts, stats: st, log: log, changed: make(chan struct{})}
}

// run is the upstream goroutine: it dials, then relays the client's events
// until the client is closed. The client keeps dialing by itself when the
// upstream is down, from the start on (client.WithRetryOnFailedConnect):
// meanwhile subscribes are queued and calls fail at once.
func (u *upstream) run(ctx context.Context) {
	log := u.log
	c, err := client.Dial(ctx, u.url, append(u.opts, client.WithRetryOnFailedConnect())...)
	if err != nil { // only when ctx ended, or the options are wrong
		if ctx.Err() == nil {
			log.Error("upstream client refused its options", zap.Error(err))
			u.issues.failed(err, 1, time.Time{})
		}
		return
	}
	connected := c.State() == client.StateConnected
	if connected {
		log.Info("upstream connected", zap.String("url", redact.URL(u.url)))
		u.issues.up()
	}
	u.mu.Lock()
	if ctx.Err() != nil { // close ran before c was stored: it is ours to close
		u.mu.Unlock()
		_ = c.Close()
		return
	}
	u.c, u.wasUp = c, connected
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
			u.mu.Lock()
			u.wasUp = true
			u.mu.Unlock()
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
	u.mu.Lock()
	c, wasUp := u.c, u.wasUp
	u.mu.Unlock()
	if c == nil {
		return client.StateConnecting
	}
	if st := c.State(); wasUp || st != client.StateReconnecting {
		return st
	}
	return client.StateConnecting // never connected yet: not a reconnect
}

// resync resubscribes topic on the upstream client, so the exchange
// sends its snapshot again (client.Client.Resync).
func (u *upstream) resync(topic string) bool {
	u.mu.Lock()
	c := u.c
	u.mu.Unlock()
	return c != nil && c.Resync(topic)
}

// lag is the upstream client's last ping round trip.
func (u *upstream) lag() time.Duration {
	if c := u.client(); c != nil {
		return c.Lag()
	}
	return 0
}

// endpoint is the upstream client's endpoint in use, redacted.
func (u *upstream) endpoint() string {
	if c := u.client(); c != nil {
		shown, _ := c.Endpoint()
		return shown
	}
	return ""
}

// quiet asks the upstream client whether topic is stale or silent.
func (u *upstream) quiet(topic string) (stale, silent bool) {
	if c := u.client(); c != nil {
		return c.Stale(topic), c.Silent(topic)
	}
	return false, false
}

// trouble is the upstream's last failure and attempts.
func (u *upstream) trouble() *trouble { return &u.issues }

// group is nil: this upstream is the sidecar's own.
func (u *upstream) group() *GroupStatus { return nil }

// await returns the client, waiting within ctx for the first dial
// attempt to make it.
func (u *upstream) await(ctx context.Context) (*client.Client, error) {
	for {
		u.mu.Lock()
		c, changed := u.c, u.changed
		u.mu.Unlock()
		if c != nil {
			if c.State() == client.StateClosed {
				return nil, ErrClosed
			}
			return c, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, fmt.Errorf("upstream not connected (%s): %s: %w", u.state(), u.issues.describe(), ctx.Err())
		}
	}
}

// SubscribeStreams subscribes topics upstream in one round of requests
// (client.Client.SubscribeStreams), a client.Stream each. While the upstream is down the
// client queues them and answers at once (they are subscribed when it is
// back); only before the client exists, for the first dial, does it wait.
// A connection lost during the subscribe is retried.
func (u *upstream) SubscribeStreams(ctx context.Context, topics []string) ([]client.Stream, []error, error) {
	for {
		c, err := u.await(ctx)
		if err != nil {
			return nil, nil, err
		}
		streams, errs, err := c.SubscribeStreams(ctx, topics)
		if err == nil {
			return streams, errs, nil
		}
		if !errors.Is(err, client.ErrConnectionLost) || ctx.Err() != nil {
			return nil, nil, err
		}
	}
}

// unsubscribe ends streams of subscribe in one round of requests
// (client.UnsubscribeEach), paced by the venue's budget as subscribes are.
func (u *upstream) UnsubscribeStreams(ctx context.Context, streams []client.Stream) error {
	c := u.client()
	if c == nil {
		return oneByOneUnsubscribe(ctx, streams)
	}
	return c.UnsubscribeStreams(ctx, streams)
}

// CallRaw makes a call upstream. While the upstream is down it fails at
// once, naming why (the client's last failure): a call is never held to
// be sent late. It never retries a call that may have been sent.
// Only the sidecar's first dial attempt is waited for (within the dial
// timeout), so a call made as it starts is not refused for nothing.
func (u *upstream) CallRaw(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	c, err := u.await(ctx)
	if err != nil {
		return u.stats.countCall(nil, fmt.Errorf("call %s: %w", method, err))
	}
	return u.stats.countCall(c.CallRaw(ctx, method, params))
}
