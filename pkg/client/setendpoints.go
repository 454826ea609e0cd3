package client

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/wsfan/wsfan/internal/endpoints"
	"go.uber.org/zap"
)

// Replacing the endpoint list while the client runs (SetEndpoints). The
// supervisor goroutine owns the list: a request is handed to it (swaps)
// and it answers once the list is in force. While a connection is up
// (awaitLoss), the connection stays when its endpoint is in the new list;
// otherwise the client moves to the new first endpoint make before break,
// the way it takes its preferred endpoint back (takeBack, handover.go):
// during the move the list is the new one with the endpoint in use after
// it, so the new first endpoint is "the preferred" the handover takes.
// Between connections (the reconnect loop's wait), the new list is taken
// at once and its first endpoint dialled.

// ErrSettingHeld is wrapped by SetEndpoints' error when a session setting
// (cancel-on-disconnect) holds on the connection in use, which moving to
// another endpoint would close, setting it off.
var ErrSettingHeld = errors.New("wsfan: a session setting holds on the connection")

// EndpointSetter is a Holder whose endpoint list can be replaced while it
// runs (Client.SetEndpoints). A Standby or a Pool is not one: each of its
// connections keeps the endpoints it was dialled with.
type EndpointSetter interface {
	SetEndpoints(ctx context.Context, urls ...string) error
}

var _ EndpointSetter = (*Client)(nil)

// endpointSwap is one SetEndpoints request, handed to the supervisor.
type endpointSwap struct {
	eps  []endpoints.Endpoint
	done chan error // buffered: the supervisor's answer, given once
}

// SetEndpoints replaces the client's endpoints (Dial's URL and
// WithEndpoints') with urls, in order of preference, while it runs, and
// returns once they are in force:
//
//   - When the endpoint in use is in urls, the connection stays (nothing
//     is dialled or subscribed again); urls are the endpoints of the
//     next failover, and WithSwitchBack takes urls[0] back in time if
//     the one in use is another.
//   - Otherwise the client dials urls[0], logs in (WithOnConnect), makes
//     its session settings and subscribes every topic there in one round
//     while the old connection still delivers, switches delivery over
//     where each topic's two streams meet, and closes the old connection
//     once calls on it are answered: nothing is lost and nothing is
//     delivered twice (the switch-back's handover, reported as a Moved
//     event). If the new endpoint does not take the
//     connection or a topic, or a subscribe or unsubscribe runs at that
//     moment, the client stays where it was, on its old endpoints, and
//     the error says so (call again). While a session setting holds
//     on the connection in use (cancel-on-disconnect, made by a call or
//     by the WithOnConnect hook: closing the connection would cancel
//     the orders placed on it) this is refused with an error
//     wrapping ErrSettingHeld, and nothing changes.
//   - Between connections (reconnecting), urls take effect at once and
//     urls[0] is dialled next, the topics restored there as after any
//     reconnect.
//
// Each URL takes a user:password@ as Dial's does. ctx bounds the wait
// for the client to take the request; once taken, the move runs to its
// end, bounded by the dial and request timeouts and the handover's
// hold. A Standby's leg (AsLeg) refuses: its Standby owns the list.
func (c *Client) SetEndpoints(ctx context.Context, urls ...string) error {
	if c.cfg.leg {
		return errors.New("client: a standby's leg keeps the standby's endpoints")
	}
	if len(urls) == 0 {
		return errors.New("client: SetEndpoints needs at least one URL")
	}
	for _, u := range urls {
		if err := checkURL(u); err != nil {
			return err
		}
	}
	req := &endpointSwap{eps: endpointsOf(urls[0], urls[1:], askStamps(c.cfg.header, c.cfg.stamps)), done: make(chan error, 1)}
	select {
	case c.swaps <- req:
	case <-c.done:
		return ErrClosed
	case <-ctx.Done():
		return ctxError(ctx, "setting the endpoints")
	}
	select {
	case err := <-req.done:
		return err
	case <-c.done:
		return ErrClosed
	}
}

// swapEndpoints answers req while cn is the live connection, and returns
// the live connection after it: cn, or the new first endpoint's. Runs on
// the supervisor goroutine.
func (c *Client) swapEndpoints(cn *conn, req *endpointSwap) *conn {
	oldEps, oldCur := c.eps.All()
	inUse := oldEps[oldCur]
	if i, ok := c.eps.Find(req.eps); ok {
		c.eps.Adopt(req.eps, i)
		c.log.Info("endpoints replaced; the connection in use stays", zap.String("endpoint", inUse.Shown), zap.Int("index", i))
		req.done <- nil
		return cn
	}
	if cn.settings.holds() {
		req.done <- fmt.Errorf("%w: moving to %s would close the connection to %s and set it off; the endpoints stay",
			ErrSettingHeld, req.eps[0].Shown, inUse.Shown)
		return cn
	}
	// The new list, the endpoint in use after it while the handover runs:
	// it dials the new first endpoint (index 0) and leaves this one.
	c.eps.Adopt(append(slices.Clip(req.eps), inUse), len(req.eps))
	next := c.takeBack(cn, Moved)
	if next == cn {
		c.eps.Adopt(oldEps, oldCur)
		req.done <- fmt.Errorf("client: not moved to %s (logged: it did not take the connection, the login or a topic, or a subscribe was running); the endpoints stay", req.eps[0].Shown)
		return cn
	}
	c.eps.Adopt(req.eps, 0)
	c.log.Info("endpoints replaced; moved to the new first one", zap.String("from", inUse.Shown), zap.String("to", req.eps[0].Shown))
	req.done <- nil
	return next
}

// sleepOrSwap waits d between two connection attempts, or until Close
// (false), or until a SetEndpoints request, which it answers by taking
// its list: the next attempt dials its first endpoint at once. Runs on
// the supervisor goroutine.
func (c *Client) sleepOrSwap(d time.Duration) bool {
	t := time.NewTimer(max(d, 0))
	defer t.Stop()
	select {
	case <-t.C:
		return !c.closed()
	case <-c.ctx.Done():
		return false
	case req := <-c.swaps:
		c.eps.Adopt(req.eps, 0)
		c.log.Info("endpoints replaced while reconnecting; dialling the new first one", zap.String("endpoint", req.eps[0].Shown))
		req.done <- nil
		return true
	}
}
