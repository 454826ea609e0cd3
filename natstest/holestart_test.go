package natstest

import (
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/faultproxy"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// A member whose NATS link stalls tells its programs when the hole
// starts: a WebSocket program that asked for gap notices gets the "down"
// notice of its topic as soon as the member notices the dead link, while
// the link is still dead, and after the heal the topic's next message
// comes with the notice of what was lost ("gap": the group's sequence
// jumped; "stale" if it also came late). The member tells the start
// once the leader's reports go unheard for the lease TTL, before its
// NATS pings notice the dead link.
func TestHoleStartIsTold(t *testing.T) {
	ns := startNATS(t)
	ex := exchange(t)
	topics := startFeed(ex, 20*time.Millisecond)
	topic := topics[0]
	leader := startSidecar(t, ns.url(), "holes", ex, "leader")
	require.Eventually(t, func() bool { return leader.ready(t) }, 10*time.Second, 10*time.Millisecond)
	p := faultproxy.Start(t, ns.addr())
	member := startSidecar(t, "nats://"+p.Addr(), "holes", ex, "member")
	require.Eventually(t, func() bool {
		g := member.srv.Status().Upstream.Group
		return g != nil && g.LeaderMember != "" && !g.Leader && g.Upstream == "connected"
	}, 10*time.Second, 10*time.Millisecond, "the member joins and hears the leader")

	ws, resp, err := websocket.DefaultDialer.Dial("ws://"+member.addr+"/ws?notify=gaps", nil)
	require.NoError(t, err)
	_ = resp.Body.Close()
	t.Cleanup(func() { _ = ws.Close() })
	require.NoError(t, ws.WriteMessage(websocket.TextMessage,
		[]byte(`{"jsonrpc":"2.0","id":1,"method":"public/subscribe","params":{"channels":["`+topic+`"]}}`)))
	type frame struct {
		notice protocol.GapNotice
		isNote bool
		at     time.Time
	}
	frames := make(chan frame, 4096)
	go func() { // the program reads what it is sent, until the test closes it
		defer close(frames)
		for {
			_, data, err := ws.ReadMessage()
			if err != nil {
				return
			}
			n, ok := protocol.ParseGapNotice(data)
			frames <- frame{notice: n, isNote: ok, at: time.Now()}
		}
	}()
	messages := 0
	for messages < 20 { // the stream flows
		select {
		case f := <-frames:
			if !f.isNote {
				messages++
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no data through the member")
		}
	}

	stalled := time.Now()
	p.Blackhole()
	var down time.Time
	for down.IsZero() {
		select {
		case f := <-frames:
			if f.isNote {
				require.Equal(t, protocol.GapNotice{Channel: topic, Cause: protocol.GapDown}, f.notice)
				down = f.at
			}
		case <-time.After(15 * time.Second):
			t.Fatal("no notice while the NATS link is dead")
		}
	}
	t.Logf("the hole's start told %v after the stall", down.Sub(stalled).Round(time.Millisecond))
	p.Heal()
	for {
		select {
		case f := <-frames:
			if f.isNote {
				assert.Equal(t, topic, f.notice.Channel)
				assert.Contains(t, []string{protocol.GapSequence, protocol.GapReconnected, protocol.GapStale}, f.notice.Cause, "the hole's end")
				return
			}
			t.Fatal("a message after the hole came without its notice")
		case <-time.After(20 * time.Second):
			t.Fatal("nothing after the heal")
		}
	}
}
