package sidecar

import (
	"context"
	"fmt"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/wsfan/wsfan/internal/redact"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/standby"
)

// upstream owns the one client connected to the real server. Its goroutine
// dials (retrying until it succeeds, so the sidecar may start before the
// upstream) and then watches the client's events. The client it made is
// the hub's feed and the local clients' calls' (feed).
type upstream struct {
	// Set by newUpstream, read only after.
	url     string // may hold a key: logged only as redact.URL(url)
	opts    []client.Option
	standby int    // Config.HotStandby
	stats   *stats // reconnects, calls, call errors
	log     *zap.Logger

	issues trouble // the last failure and the attempts since

	// mu protects the following.
	mu      sync.Mutex
	c       client.Holder // nil until the first dial attempt ends: a *client.Client, or with Config.HotStandby a *standby.Standby
	wasUp   bool          // the client was connected once
	changed chan struct{} // closed and replaced whenever c or its state changes
}

func newUpstream(url string, standby int, opts []client.Option, st *stats, log *zap.Logger) *upstream {
	return &upstream{url: url, standby: standby, opts: opts, stats: st, log: log, changed: make(chan struct{})}
}

// dial makes the upstream's client: one connection, or with a hot
// standby 1+standby legs.
func (u *upstream) dial(ctx context.Context) (client.Holder, error) {
	opts := append(u.opts, client.WithRetryOnFailedConnect())
	if u.standby > 0 {
		return standby.Dial(ctx, u.url, u.standby, opts...)
	}
	return client.Dial(ctx, u.url, opts...)
}

// run is the upstream goroutine: it dials, then relays the client's events
// until the client is closed. The client keeps dialing by itself when the
// upstream is down, from the start on (client.WithRetryOnFailedConnect):
// meanwhile subscribes are queued and calls fail at once.
func (u *upstream) run(ctx context.Context) {
	log := u.log
	c, err := u.dial(ctx)
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
			if u.standby > 0 && c.State() == client.StateConnected {
				log.Warn("upstream leg disconnected; the others carry on", zap.Int("leg", ev.Connection), zap.Error(ev.Err))
				break
			}
			u.issues.failed(ev.Err, 0, time.Time{})
			log.Warn("upstream disconnected", zap.Error(ev.Err))
		case client.Reconnecting:
			if u.standby > 0 && c.State() == client.StateConnected {
				break // a leg: the upstream is up
			}
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
func (u *upstream) client() client.Holder {
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

// lag is the upstream client's last ping round trip (client.Lagger).
func (u *upstream) lag() time.Duration {
	if c, ok := u.client().(client.Lagger); ok {
		return c.Lag()
	}
	return 0
}

// endpoint is the upstream client's endpoint in use, redacted
// (client.Endpointer).
func (u *upstream) endpoint() string {
	if c, ok := u.client().(client.Endpointer); ok {
		shown, _ := c.Endpoint()
		return shown
	}
	return ""
}

// legs describes a hot standby's connections, or is nil without one.
func (u *upstream) legs() []LegStatus {
	sb, ok := u.client().(*standby.Standby)
	if !ok {
		return nil
	}
	var out []LegStatus
	for i, c := range sb.Legs() {
		shown, _ := c.Endpoint()
		out = append(out, LegStatus{Leg: i, Endpoint: shown, State: c.State().String(), LagSeconds: c.Lag().Seconds()})
	}
	return out
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

// feed returns the client, waiting within ctx for the first dial
// attempt to make it. While the upstream is down the client queues
// subscribes and answers them at once (they are subscribed when it is
// back), and fails calls at once, naming why (its last failure): a call
// is never held to be sent late. Only the first dial attempt is waited
// for, so a call made as the sidecar starts is not refused for nothing.
func (u *upstream) feed(ctx context.Context) (client.Holder, error) {
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
