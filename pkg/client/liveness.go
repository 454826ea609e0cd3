package client

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/gorilla/websocket"
)

// Liveness: the writer sends a WebSocket ping every ping interval, its
// payload the time it was sent; the server's pong echoes it, so each pong
// gives the round trip, which is the link's lag. A pong that is behind a
// backlog of data on a slow link comes back late, so the round trip
// measures the backlog too, not only the network.
//
// The read deadline is the time the last answered ping was sent, plus the
// interval and the pong timeout: the next ping must be answered within the
// timeout. A black-holed link fails when it passes (at most interval +
// timeout after the link died), and so does a link lagging more than the
// timeout: its data keeps flowing, but its pongs come back too late. The
// reader owns the deadline: the pong handler runs on it, and so does the
// re-arming after it stalled on a consumer (armDeadline), so nothing
// races on the socket's deadline.

// lagEpisodeRatio: a round trip over timeout/lagEpisodeRatio raises a
// Lagging event; the episode ends once one is under half of that.
const lagEpisodeRatio = 2

// pingPayload encodes the send time of a ping.
func pingPayload(now time.Time) []byte {
	return binary.BigEndian.AppendUint64(make([]byte, 0, 8), uint64(now.UnixNano()))
}

// window is how long after a ping was sent its answer may come, plus the
// interval to the next one.
func (cn *conn) window() time.Duration { return cn.c.cfg.pingInterval + cn.c.cfg.pongTimeout }

// startLiveness arms the first deadline and installs the pong handler.
// Called by dial before the reader starts.
func (cn *conn) startLiveness(now time.Time) {
	if cn.c.cfg.pingInterval <= 0 {
		return
	}
	cn.answered = now
	cn.c.ponged.Store(now.UnixNano())
	_ = cn.ws.SetReadDeadline(now.Add(cn.window()))
	cn.ws.SetPongHandler(cn.onPong)
}

// onPong runs on the reader goroutine for every pong. A pong whose
// payload is not one of ours (a server's unsolicited pong) says nothing
// about how late the link is, and leaves the deadline as it was.
func (cn *conn) onPong(appData string) error {
	if len(appData) != 8 {
		return nil
	}
	sent := time.Unix(0, int64(binary.BigEndian.Uint64([]byte(appData))))
	now := time.Now()
	rtt := now.Sub(sent)
	if rtt < 0 || rtt > time.Hour { // not a time we sent
		return nil
	}
	c := cn.c
	c.lag.Store(int64(rtt))
	cn.answered = sent
	c.ponged.Store(sent.UnixNano())
	threshold := c.cfg.pongTimeout / lagEpisodeRatio
	switch {
	case !cn.lagging && rtt > threshold:
		cn.lagging = true
		c.emit(Event{Kind: Lagging, Lag: rtt})
	case cn.lagging && rtt < threshold/2:
		cn.lagging = false
	}
	return cn.ws.SetReadDeadline(sent.Add(cn.window()))
}

// armDeadline gives the link a fresh window after the reader stalled on
// a consumer (a Block subscription, or the grace wait): pongs that
// arrived meanwhile could not be read, which says nothing of the link.
// Runs on the reader goroutine.
func (cn *conn) armDeadline() {
	if cn.c.cfg.pingInterval > 0 {
		_ = cn.ws.SetReadDeadline(time.Now().Add(cn.window()))
	}
}

// livenessError says why the read deadline passed: nothing at all
// arrived (a dead or black-holed link), or data still arrived but the
// pongs came back later than the timeout (a link lagging behind).
func (cn *conn) livenessError(err error) error {
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		return nil
	}
	c := cn.c
	now := time.Now()
	silent := now.Sub(time.Unix(0, cn.lastRead.Load())).Round(time.Millisecond)
	if silent < c.cfg.pongTimeout {
		// The lag measured is how long the ping after the last one
		// answered has waited for its pong: the last round trip
		// answered is from before the link fell behind.
		late := now.Sub(cn.answered.Add(c.cfg.pingInterval)).Round(time.Millisecond)
		return fmt.Errorf("%w: lagging %v: no pong within %v while data still arrives (ping every %v)",
			ErrDeadPeer, late, c.cfg.pongTimeout, c.cfg.pingInterval)
	}
	return fmt.Errorf("%w: nothing received for %v (ping every %v, pong timeout %v)",
		ErrDeadPeer, silent, c.cfg.pingInterval, c.cfg.pongTimeout)
}

// sendPing writes a ping carrying its send time. Runs on the writer
// goroutine (gorilla allows WriteControl beside other writes).
func (cn *conn) sendPing(now time.Time) error {
	return cn.ws.WriteControl(websocket.PingMessage, pingPayload(now), now.Add(cn.c.cfg.writeTimeout))
}

// late reports whether the client's pongs are late at now: the ping
// after the last one answered has waited longer than the Lagging
// threshold (half the pong timeout), or the last round trip took that
// long. A Standby sends calls to another leg meanwhile, before the
// connection is declared dead.
func (c *Client) late(now time.Time) bool {
	if c.cfg.pingInterval <= 0 {
		return false
	}
	threshold := c.cfg.pongTimeout / lagEpisodeRatio
	waited := now.Sub(time.Unix(0, c.ponged.Load())) - c.cfg.pingInterval
	return waited > threshold || c.Lag() > threshold
}

// Lag is the round trip of the last ping answered: how far behind the
// server's data arrives, a backlog on a slow link included. It is 0
// before the first pong, with pings off, and while disconnected.
func (c *Client) Lag() time.Duration { return time.Duration(c.lag.Load()) }
