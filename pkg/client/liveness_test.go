package client_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/deribit"
	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// A server that accepts TCP and never upgrades: Dial fails with ErrTimeout
// once the dial timeout is up, and not much later.
func TestDialTimeoutOnServerThatNeverUpgrades(t *testing.T) {
	addr, _ := holdListener(t, "127.0.0.1:0")
	for _, timeout := range []time.Duration{50 * time.Millisecond, 200 * time.Millisecond} {
		t.Run(timeout.String(), func(t *testing.T) {
			start := time.Now()
			c, err := client.Dial(testutil.Context(t), "ws://"+addr+"/ws", client.WithProtocol(thalex.Protocol()), client.WithDialTimeout(timeout))
			took := time.Since(start)
			require.Nil(t, c)
			require.ErrorIs(t, err, client.ErrTimeout)
			assert.GreaterOrEqual(t, took, timeout)
			// Honoured, not exceeded by the connect's own minutes-long
			// timeout: the bound is loose, for a loaded machine.
			assert.Less(t, took, timeout+2*time.Second, "dial timeout honoured")
		})
	}
}

// The caller's context bounds Dial too, and cancelling it is prompt.
func TestDialHonoursCallerContext(t *testing.T) {
	addr, accepted := holdListener(t, "127.0.0.1:0")
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-accepted
		cancel()
	}()
	start := time.Now()
	c, err := client.Dial(ctx, "ws://"+addr+"/ws", client.WithProtocol(thalex.Protocol()), client.WithDialTimeout(10*time.Second))
	require.Nil(t, c)
	require.Error(t, err)
	assert.NotErrorIs(t, err, client.ErrTimeout, "a cancelled dial is not a timeout")
	assert.Less(t, time.Since(start), 5*time.Second, "well before the 10 s dial timeout")
}

// A server that stops answering pings is detected within ping interval +
// pong timeout, and the client reconnects.
func TestDeadPeerDetectedByPing(t *testing.T) {
	const interval, timeout = 50 * time.Millisecond, 100 * time.Millisecond
	for _, d := range []int{0, 3} { // Thalex, Ethereal: pings are the dialect's only liveness check
		t.Run(dialects[d].name, func(t *testing.T) {
			d := dialects[d]
			srv := newServer(t, d.server)
			c := dial(t, srv, d.proto(), fastBackoff(), client.WithPing(interval, timeout))
			ctx := testutil.Context(t)
			sub, err := c.Subscribe(ctx, []string{d.topics[0]})
			require.NoError(t, err)
			// While pongs come back the connection stays up over several
			// pong windows.
			requireNoEvent(t, c, client.Disconnected, 3*(interval+timeout))

			srv.SetPongs(false)
			start := time.Now()
			ev := waitEvent(t, c, client.Disconnected)
			took := time.Since(start)
			srv.SetPongs(true)
			require.ErrorIs(t, ev.Err, client.ErrDeadPeer)
			// The last pong may have come just before they stopped.
			assert.Less(t, took, interval+timeout+100*time.Millisecond, "detected within interval + timeout")

			waitEvent(t, c, client.Resubscribed)
			require.NoError(t, srv.WaitSubscribers(ctx, d.topics[0], 1))
			srv.Publish(d.topics[0], payload(d.name, d.topics[0], 1))
			assert.True(t, receive(t, sub).Reconnected())
		})
	}
}

// A server that goes silent (no frames, no pongs) with pings off is
// caught by the idle watchdog; frames keep it quiet while they flow.
func TestIdleWatchdog(t *testing.T) {
	const idle = 100 * time.Millisecond
	d := dialects[0]
	srv := newServer(t, d.server)
	c := dial(t, srv, d.proto(), fastBackoff(), client.WithPing(0, 0), client.WithIdleTimeout(idle))
	ctx := testutil.Context(t)
	sub, err := c.Subscribe(ctx, []string{d.topics[0]})
	require.NoError(t, err)
	drainEvents(c)

	// A feed faster than the watchdog keeps the connection.
	for i := range 10 {
		srv.Publish(d.topics[0], payload(d.name, d.topics[0], i))
		receive(t, sub)
		requireNoEvent(t, c, client.Disconnected, idle/4)
	}

	srv.SetSilent(true)
	start := time.Now()
	ev := waitEvent(t, c, client.Disconnected)
	took := time.Since(start)
	srv.SetSilent(false)
	require.ErrorIs(t, ev.Err, client.ErrDeadPeer)
	assert.Contains(t, ev.Err.Error(), "no frame")
	assert.Less(t, took, idle+idle/4+100*time.Millisecond)
	// The new connection is idle too and will be dropped in turn; what
	// matters is that it came up with the topic restored.
	waitEvent(t, c, client.Resubscribed)
}

// Thalex's system "reconnect soon" notice: a ServerNotice event and a
// reconnect at once, whatever the backoff says.
func TestThalexSystemReconnect(t *testing.T) {
	d := dialects[0]
	srv := newServer(t, d.server)
	c := dial(t, srv, thalex.Protocol(), constantBackoff(time.Hour)) // with notices, the default
	ctx := testutil.Context(t)
	sub, err := c.Subscribe(ctx, []string{d.topics[0]})
	require.NoError(t, err)
	drainEvents(c)
	require.NoError(t, srv.WaitConnections(ctx, 1))

	start := time.Now()
	require.Equal(t, 1, srv.SendReconnectNotice())
	evs := eventsUntil(t, c, client.Resubscribed)
	assert.Less(t, time.Since(start), 2*time.Second)
	assert.Equal(t, []client.EventKind{client.ServerNotice, client.Disconnected, client.Reconnecting, client.Connected, client.Resubscribed}, kindsOf(evs))
	for _, ev := range evs {
		switch ev.Kind {
		case client.Disconnected:
			assert.ErrorIs(t, ev.Err, client.ErrServerReconnect)
		case client.Reconnecting:
			assert.Equal(t, 1, ev.Attempt)
			assert.Zero(t, ev.Wait, "reconnect at once")
		}
	}
	require.NoError(t, srv.WaitSubscribers(ctx, d.topics[0], 1))
	srv.Publish(d.topics[0], payload(d.name, d.topics[0], 1))
	assert.True(t, receive(t, sub).Reconnected())
}

// A heartbeat interval Deribit would refuse is refused by Dial, naming the
// minimum, before anything is dialed.
func TestDeribitHeartbeatBelowMinimum(t *testing.T) {
	c, err := client.Dial(testutil.Context(t), "ws://127.0.0.1:1/ws", client.WithProtocol(deribit.Protocol(deribit.WithHeartbeat(5*time.Second))))
	require.Nil(t, c)
	require.ErrorContains(t, err, "heartbeat interval 5s is below Deribit's minimum of 10s")
}

// Deribit: public/set_heartbeat on every connection, each test_request
// answered at once with public/test, so the server keeps the connection.
func TestDeribitHeartbeat(t *testing.T) {
	const hb = 50 * time.Millisecond
	srv := newServer(t, deribit.Name)
	// Deribit refuses an interval under 10s, and so does Dial
	// (TestDeribitHeartbeatBelowMinimum); the test exchange takes any, and
	// taking the interval as valid lets the test run in milliseconds.
	c := dial(t, srv, lenient{deribit.Protocol(deribit.WithHeartbeat(hb))}, fastBackoff())
	ctx := testutil.Context(t)
	_, err := c.Subscribe(ctx, []string{"ticker.BTC-PERPETUAL.100ms"})
	require.NoError(t, err)
	drainEvents(c)
	assert.Equal(t, 1, srv.CountReceived("public/set_heartbeat"))

	// The server's own heartbeat: it closes the connection when a
	// test_request goes unanswered.
	require.NoError(t, srv.WaitReceived(ctx, "public/test", 4))
	// And one sent out of turn.
	n := srv.CountReceived("public/test")
	require.Equal(t, 1, srv.SendHeartbeatRequest())
	require.NoError(t, srv.WaitReceived(ctx, "public/test", n+1))
	requireNoEvent(t, c, client.Disconnected, 2*hb)
	assert.Equal(t, client.StateConnected, c.State())

	// A new connection asks for the heartbeat again before restoring.
	require.NoError(t, srv.WaitConnections(ctx, 1))
	srv.DropConnections()
	waitEvent(t, c, client.Resubscribed)
	assert.Equal(t, 2, srv.CountReceived("public/set_heartbeat"))
	var setHB, resub int
	for i, r := range srv.Received() {
		switch {
		case r.Conn == 2 && contains(r.Data, "public/set_heartbeat"):
			setHB = i
		case r.Conn == 2 && contains(r.Data, "public/subscribe"):
			resub = i
		}
	}
	assert.Less(t, setHB, resub, "handshake before resubscribe")
}

// Without notices the client does not subscribe the system channel, and
// a notice never comes (Thalex sends it to system's subscribers only); a
// user's own subscription to system gets its messages, notices included.
func TestThalexSystemChannel(t *testing.T) {
	srv := newServer(t, thalex.Name)
	quiet := dial(t, srv, thalex.Protocol(thalex.WithNotices(false)), constantBackoff(time.Hour))
	ctx := testutil.Context(t)
	drainEvents(quiet)
	assert.Zero(t, srv.CountSubscribes("system"))
	assert.Zero(t, srv.SendReconnectNotice(), "no connection holds system")

	sub, err := quiet.Subscribe(ctx, []string{"system"})
	require.NoError(t, err)
	srv.Publish("system", []byte(`{"event":"maintenance","in":"1h"}`))
	assert.JSONEq(t, `{"event":"maintenance","in":"1h"}`, string(receive(t, sub).Data))
}

// A server whose data keeps flowing while its pongs stop is a lagging
// link, and the error says how late the pong is, measured: at least the
// pong timeout (it named the last round trip answered, from before the
// link fell behind: "0s" while pongs were seconds late).
func TestLaggingErrorReportsTheMeasuredLag(t *testing.T) {
	const interval, timeout = 20 * time.Millisecond, 150 * time.Millisecond
	d := dialects[0]
	srv := newServer(t, d.server)
	c := dial(t, srv, d.proto(), fastBackoff(), client.WithPing(interval, timeout))
	ctx := testutil.Context(t)
	_, err := c.Subscribe(ctx, []string{d.topics[0]}, client.Overflow(client.DropOldest))
	require.NoError(t, err)
	srv.SetPongs(false)
	defer srv.SetPongs(true)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { // data still arrives
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
				srv.Publish(d.topics[0], payload(d.name, d.topics[0], i))
			}
		}
	}()
	ev := waitEvent(t, c, client.Disconnected)
	close(stop)
	<-done
	require.ErrorIs(t, ev.Err, client.ErrDeadPeer)
	msg := ev.Err.Error()
	_, after, found := strings.Cut(msg, "lagging ")
	require.True(t, found, msg)
	lag, err := time.ParseDuration(strings.SplitN(after, ":", 2)[0])
	require.NoError(t, err, msg)
	assert.GreaterOrEqual(t, lag, timeout, msg)
}

// lenient is a dialect whose options are taken as valid, whatever its
// venue would say (Venue.Invalid).
type lenient struct{ protocol.Protocol }

func (l lenient) Venue() protocol.Venue {
	v := l.Protocol.Venue()
	v.Invalid = nil
	return v
}
