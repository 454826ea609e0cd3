package sidecar_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/sidecar"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// An upstream restart is invisible on the local connections: they stay
// open, the stream resumes with the same frames (for Ethereum the same
// subscription id), and the reconnect shows in the status.
func TestUpstreamRestartIsInvisible(t *testing.T) {
	for _, dc := range dialects {
		t.Run(dc.name, func(t *testing.T) {
			r := newRig(t, dc.d, nil)
			a, b := r.dial(t), r.dial(t)
			localID := subscribeAll(t, dc, a, b)
			r.waitClients(t, 2, 1)
			require.NoError(t, r.up.WaitSubscribers(testutil.Context(t), dc.topic, 1))
			r.up.Publish(dc.topic, []byte(payload(0)))
			for _, ws := range []*websocket.Conn{a, b} {
				expectFrame(t, dc, ws, localID, 0)
			}

			r.up.Stop()
			require.NoError(t, r.up.Start())
			require.NoError(t, r.up.WaitSubscribers(testutil.Context(t), dc.topic, 1))
			for i := 1; i <= 20; i++ {
				r.up.Publish(dc.topic, []byte(payload(i)))
			}
			for _, ws := range []*websocket.Conn{a, b} {
				for i := 1; i <= 20; i++ {
					expectFrame(t, dc, ws, localID, i)
				}
			}
			st := r.sc.Status()
			require.EqualValues(t, 2, len(st.Clients))
			if st.Upstream.Reconnects < 1 || st.Upstream.Resumes != 1 || st.Upstream.LastResume == nil {
				t.Fatalf("reconnect not surfaced: %+v", st.Upstream)
			}
			require.EqualValues(t, uint64(1), st.Topics[0].Resumes)
			require.EqualValues(t, 2, r.up.CountSubscribes(dc.topic)) // the first and the restore
		})
	}
}

// slowDialer is the dialer of clients that do not read: the kernel's
// buffers then hold a few MB before the sidecar's queue fills.
var slowDialer = websocket.DefaultDialer

// readInOrder reads frames on ws in the background until it fails,
// checking they come in order and counting them in progress.
func readInOrder(ws *websocket.Conn, progress *atomic.Int64) <-chan error {
	done := make(chan error, 1)
	go func() {
		for i := 0; ; i++ {
			_, data, err := ws.ReadMessage()
			if err != nil {
				done <- fmt.Errorf("frame %d: %w", i, err)
				return
			}
			if !strings.Contains(string(data), fmt.Sprintf(`"seq":%d,`, i)) {
				done <- fmt.Errorf("frame %d: got %.80s", i, data)
				return
			}
			progress.Add(1)
		}
	}()
	return done
}

func bigPayload(i int) []byte {
	return []byte(fmt.Sprintf(`{"s":"BTCUSD","seq":%d,"pad":"%s"}`, i, strings.Repeat("x", 4000)))
}

const slowFrames = 3000 // 12 MB: more than the socket buffers absorb

// publishPaced publishes big frames in bursts of 100, each once the fast
// client has read the last one (so only the slow client falls behind),
// until stop says so or slowFrames are out. It returns how many it
// published, all of which the fast client has read.
func publishPaced(t *testing.T, r *rig, topic string, fast *websocket.Conn, stop func() bool) int {
	t.Helper()
	var progress atomic.Int64
	failed := readInOrder(fast, &progress)
	n := 0
	for n < slowFrames && !stop() {
		for range 100 {
			r.up.Publish(topic, bigPayload(n))
			n++
		}
		waitFor(t, "the fast client", func() bool {
			select {
			case err := <-failed:
				t.Fatalf("fast client: %v", err)
			default:
			}
			return progress.Load() == int64(n)
		})
	}
	return n
}

// A client that never reads is disconnected with a "slow consumer" close
// reason, while the other client gets every frame.
func TestSlowClientDisconnected(t *testing.T) {
	dc := dialects[0]
	r := newRig(t, dc.d, func(c *sidecar.Config) { c.QueueBytes = 1 << 20 })
	fast := r.dial(t)
	slow, _, err := slowDialer.Dial(r.wsURL(), nil)
	require.NoError(t, err)
	defer slow.Close()
	subscribeAll(t, dc, fast, slow)
	r.waitClients(t, 2, 1)
	cut := func() bool {
		return strings.HasPrefix(r.client(t, slow).Closing, "slow consumer")
	}
	if n := publishPaced(t, r, dc.topic, fast, cut); n == slowFrames {
		t.Fatalf("the slow client was not cut off after %d frames", n)
	}
	// Reading now, the slow client gets what was written and then the reason.
	for {
		_ = slow.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, _, err := slow.ReadMessage()
		if err == nil {
			continue
		}
		var ce *websocket.CloseError
		if !errors.As(err, &ce) || ce.Code != websocket.ClosePolicyViolation || !strings.HasPrefix(ce.Text, "slow consumer") {
			t.Fatalf("want a slow-consumer close, got %v", err)
		}
		break
	}
	waitFor(t, "slow client gone", func() bool { return len(r.sc.Status().Clients) == 1 })
}

// fallBehind starts a sidecar under Overflow drop-newest with two
// clients of dc's topic, the slow one dialled with query, publishes
// slowFrames as fast as the other reads them while the slow one reads
// nothing, and returns once every frame was offered to the slow one,
// with its status then.
func fallBehind(t *testing.T, dc dialectCase, query string) (*rig, *websocket.Conn, sidecar.ClientStatus) {
	t.Helper()
	r := newRig(t, dc.d, func(c *sidecar.Config) {
		c.QueueBytes = 1 << 20
		c.Overflow = client.DropNewest
		c.WriteTimeout = time.Minute // the slow client stays connected
	})
	fast := r.dial(t)
	slow := r.dialWith(t, query, nil)
	subscribeAll(t, dc, fast, slow)
	r.waitClients(t, 2, 1)
	publishPaced(t, r, dc.topic, fast, func() bool { return false })
	var st sidecar.ClientStatus
	waitFor(t, "every frame offered", func() bool {
		st = r.client(t, slow)
		return st.Delivered+st.Dropped >= slowFrames // the marks of a client that asked for them too
	})
	return r, slow, st
}

// Under Overflow drop-newest a client that does not read loses frames, counted:
// for it, frames offered = delivered + dropped exactly, and it later reads
// exactly the delivered ones, in order. The other client gets everything.
func TestSlowClientDropped(t *testing.T) {
	dc := dialects[0]
	r, slow, st := fallBehind(t, dc, "")
	if st.Dropped == 0 {
		t.Fatal("nothing was dropped")
	}
	require.EqualValues(t, uint64(slowFrames), st.Delivered+st.Dropped)
	topic := r.sc.Status().Topics[0]
	require.EqualValues(t, uint64(slowFrames), topic.Received)
	require.EqualValues(t, 2*topic.Received, topic.Delivered+topic.Dropped)

	var got atomic.Int64
	last := -1
	for got.Load() < int64(st.Delivered) {
		_ = slow.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, data, err := slow.ReadMessage()
		require.NoError(t, err)
		var seq int
		_, _ = fmt.Sscanf(string(data[strings.Index(string(data), `"seq":`)+6:]), "%d", &seq)
		if seq <= last {
			t.Fatalf("frame %d after %d", seq, last)
		}
		last = seq
		got.Add(1)
	}
	waitFor(t, "every delivered frame written", func() bool { return r.client(t, slow).Written == st.Delivered+1 }) // and the ack
}

// A frame over the limit, too many topics and too many clients each end
// the connection with their own close reason.
func TestLimitsCloseWithReason(t *testing.T) {
	r := newRig(t, thalex.Name, func(c *sidecar.Config) {
		c.MaxFrameBytes = 1024
		c.MaxTopicsPerClient = 2
		c.MaxClients = 2
	})
	expectClose := func(ws *websocket.Conn, code int, text string) {
		t.Helper()
		for {
			_ = ws.SetReadDeadline(time.Now().Add(5 * time.Second))
			_, _, err := ws.ReadMessage()
			if err == nil {
				continue
			}
			var ce *websocket.CloseError
			if !errors.As(err, &ce) || ce.Code != code || ce.Text != text {
				t.Fatalf("want close %d %q, got %v", code, text, err)
			}
			return
		}
	}
	a := r.dial(t)
	testutil.Send(t, a, `{"jsonrpc":"2.0","id":1,"method":"public/subscribe","params":{"channels":["`+strings.Repeat("x", 2000)+`"]}}`)
	expectClose(a, websocket.CloseMessageTooBig, "frame exceeds the 1024-byte limit")

	b := r.dial(t)
	testutil.Send(t, b, `{"jsonrpc":"2.0","id":1,"method":"public/subscribe","params":{"channels":["a","b","c"]}}`)
	expectClose(b, websocket.ClosePolicyViolation, "too many topics: the limit is 2 per client")

	waitFor(t, "no clients", func() bool { return len(r.sc.Status().Clients) == 0 })
	_, _ = r.dial(t), r.dial(t)
	// A session registers after its handshake: wait for both, or the third
	// could register first and one of these be the one refused.
	waitFor(t, "two clients", func() bool { return len(r.sc.Status().Clients) == 2 })
	c := r.dial(t)
	expectClose(c, websocket.CloseTryAgainLater, "too many clients: the limit is 2")
}

// With the cache on, a late joiner gets the topic's last message first.
func TestLastMessageCache(t *testing.T) {
	dc := dialects[1]
	r := newRig(t, dc.d, func(c *sidecar.Config) { c.LastMessageCache = true })
	a := r.dial(t)
	subscribeAll(t, dc, a)
	r.waitClients(t, 1, 1)
	r.up.Publish(dc.topic, []byte(payload(1)))
	expectFrame(t, dc, a, "", 1)
	b := r.dial(t)
	subscribeAll(t, dc, b)
	expectFrame(t, dc, b, "", 1)
	r.up.Publish(dc.topic, []byte(payload(2)))
	expectFrame(t, dc, a, "", 2)
	expectFrame(t, dc, b, "", 2)
}

// A request over a limit is refused before it reserves anything, so it
// causes no upstream traffic: neither the per-client limit (which closes
// the client) nor the sidecar's topic limit (which refuses the request).
func TestRefusedRequestCausesNoUpstreamTraffic(t *testing.T) {
	r := newRig(t, thalex.Name, func(c *sidecar.Config) {
		c.MaxTopicsPerClient = 100
		c.MaxTopics = 150
	})
	channels := func(prefix string, n int) string {
		names := make([]string, n)
		for i := range names {
			names[i] = fmt.Sprintf("%q", fmt.Sprintf("%s.%d", prefix, i))
		}
		return strings.Join(names, ",")
	}

	greedy := r.dial(t)
	testutil.Send(t, greedy, `{"jsonrpc":"2.0","id":1,"method":"public/subscribe","params":{"channels":[`+channels("ticker.greedy", 1000)+`]}}`)
	_ = greedy.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, _, err := greedy.ReadMessage()
	var ce *websocket.CloseError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, websocket.ClosePolicyViolation, ce.Code)

	// 100 topics held by two clients leave room for 50 more: a request
	// for 60 new ones is refused whole.
	a, b := r.dial(t), r.dial(t)
	testutil.Send(t, a, `{"jsonrpc":"2.0","id":1,"method":"public/subscribe","params":{"channels":[`+channels("ticker.a", 100)+`]}}`)
	require.Len(t, testutil.RecvJSON(t, a)["result"], 100)
	testutil.Send(t, b, `{"jsonrpc":"2.0","id":2,"method":"public/subscribe","params":{"channels":[`+channels("ticker.b", 60)+`]}}`)
	require.Empty(t, testutil.RecvJSON(t, b)["result"], "the request over the sidecar's topic limit is refused whole")
	require.Equal(t, 1, r.up.CountSubscribes("ticker.a.99"), "a's topics went upstream")
	require.Zero(t, r.up.CountSubscribes("ticker.b.0"), "b's did not")
	require.Len(t, r.sc.Status().Topics, 100)
}

// A client whose frame is over the limit reads the close reason, never a
// connection reset, however much of the frame the sidecar had not read:
// the sidecar drains the rest before it closes the socket.
func TestFrameTooLargeCloseReasonArrives(t *testing.T) {
	r := newRig(t, thalex.Name, func(c *sidecar.Config) { c.MaxFrameBytes = 1024 })
	big := `{"jsonrpc":"2.0","id":1,"method":"public/subscribe","params":{"channels":["` + strings.Repeat("x", 1<<20) + `"]}}`
	for i := range 50 {
		ws := r.dial(t)
		require.NoError(t, ws.WriteMessage(websocket.TextMessage, []byte(big)))
		_ = ws.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, _, err := ws.ReadMessage()
		var ce *websocket.CloseError
		require.ErrorAs(t, err, &ce, "run %d", i)
		require.Equal(t, websocket.CloseMessageTooBig, ce.Code, "run %d", i)
		require.Equal(t, "frame exceeds the 1024-byte limit", ce.Text, "run %d", i)
		_ = ws.Close()
	}
}

// Status streams count against -max-clients: with the limit taken by a
// WebSocket client and a status page, another page and another client
// are refused, each saying why; the pages share one encoding of the
// status.
func TestStatusStreamsCountAgainstMaxClients(t *testing.T) {
	r := newRig(t, thalex.Name, func(c *sidecar.Config) { c.MaxClients = 2 })
	_ = r.dial(t)
	waitFor(t, "one client", func() bool { return len(r.sc.Status().Clients) == 1 })
	page := openSSE(t, r.url+"/v1/status/stream", "")
	assert.Contains(t, page.next(t).data, `"clients"`)

	code, body := httpGet(t, r.url+"/v1/status/stream")
	assert.EqualValues(t, http.StatusServiceUnavailable, code)
	assert.Contains(t, body, "too many clients: the limit is 2")
	ws := r.dial(t)
	for {
		_ = ws.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, _, err := ws.ReadMessage(); err != nil {
			var ce *websocket.CloseError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, "too many clients: the limit is 2", ce.Text)
			break
		}
	}
	page.close()
	waitFor(t, "the page's place given back", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, r.url+"/v1/status/stream", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
}
