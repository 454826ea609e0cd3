package client

import (
	"context"
	"errors"
	"time"

	"go.uber.org/zap"
)

// Taking the preferred endpoint back. A Client whose connection failed
// over to another endpoint (WithEndpoints) goes back to its first one
// once that has answered probes for a while, make before break
// (handover.go). A Standby's leg that did so goes back to its own
// endpoint by reconnecting, when another leg is up to carry the stream
// meanwhile: the merged stream loses nothing either.

// Defaults of WithSwitchBack.
const (
	DefaultProbeEvery  = 5 * time.Second
	DefaultSwitchAfter = 30 * time.Second
)

// WithSwitchBack sets how a connection that failed over to another
// endpoint (WithEndpoints) takes its preferred one back: that endpoint
// is probed (a WebSocket handshake, then closed) every probeEvery, and
// once it has answered every probe for after, the client connects there,
// logs in and subscribes every topic while the old connection still
// delivers, and closes the old one once each topic's two streams have
// met (handover.go): nothing lost, nothing twice. It does not while a
// session setting (cancel-on-disconnect) holds, which closing the old
// connection would trigger. A Standby's leg reconnects there instead, if
// another leg is up. A probe that fails starts the period again.
// probeEvery 0 turns it off. Default: DefaultProbeEvery (5 s),
// DefaultSwitchAfter (30 s).
func WithSwitchBack(probeEvery, after time.Duration) Option {
	return clientOption(func(c *config) { c.probeEvery, c.switchAfter = max(probeEvery, 0), max(after, 0) })
}

// errSwitchBack ends a connection the client leaves for its preferred
// endpoint (switchBack).
var errSwitchBack = errors.New("wsfan: leaving for the preferred endpoint")

// probe reports whether the client's first endpoint answers a WebSocket
// handshake now. A probe is a new connection: it waits for the venue's
// pace of them like any other (paceConnect).
func (c *Client) probe(ctx context.Context) bool {
	ep := c.eps.Get(0)
	if c.paceConnect(ctx, ep.URL) != nil {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, c.cfg.dialTimeout)
	defer cancel()
	ws, resp, err := c.dialer.DialContext(ctx, ep.URL, ep.Header)
	if resp != nil && resp.Body != nil {
		_ = resp.Body.Close()
	}
	if err != nil {
		return false
	}
	_ = ws.Close()
	return true
}

// switchBack ends the live connection so the next one is dialled to the
// first endpoint at once (superviseLoop). It reports whether there was
// one to end: none while a session setting holds on it, which ending it
// would set off (settingHolds).
func (c *Client) switchBack() bool {
	cn := c.conn.Load()
	if cn == nil || c.settingHolds(cn) {
		return false
	}
	c.log.Info("taking the preferred endpoint back", zap.String("endpoint", c.eps.Get(0).Shown))
	cn.fail(errSwitchBack)
	return true
}
