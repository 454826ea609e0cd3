package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/pkg/deribit"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// The sidecar's limits, checked on the program as deployed (a process of
// its own, see startProgram): a subscribe the upstream does not answer,
// an upstream message that is not UTF-8, a topic name over the cap and an
// HTTP connection that stops sending, each while a bystander on the same
// sidecar loses no message.

// A subscribe the upstream does not answer (its answers are held back
// far beyond -request-timeout 1s) holds up nothing else of the client's:
// its WebSocket ping is answered and its Deribit heartbeat reply
// (public/test, answered by the sidecar) comes back at once; after the
// timeout the subscribe is answered with an error naming the topic and
// the timeout, not an empty success. The bystander, whose notifications
// are not held back, gets every message meanwhile.
func TestProgramUnansweredSubscribeTimesOut(t *testing.T) {
	up, p, b := probeProgram(t, deribit.Name, "", "-request-timeout", "1s")
	b.gotAll(t)

	const probe = "ticker.ETH-PERPETUAL.100ms"
	up.SetResponseDelay(time.Minute) // answers held back, notifications not
	defer up.SetResponseDelay(0)
	ws := p.dial(t)
	frames := make(chan string, 8)
	pong := make(chan struct{}, 1)
	ws.SetPongHandler(func(string) error {
		select {
		case pong <- struct{}{}:
		default:
		}
		return nil
	})
	start := time.Now()
	require.NoError(t, ws.WriteMessage(websocket.TextMessage,
		[]byte(`{"jsonrpc":"2.0","id":1,"method":"public/subscribe","params":{"channels":["`+probe+`"]}}`)))
	require.Eventually(t, func() bool { return up.CountSubscribes(probe) == 1 }, 5*time.Second, 5*time.Millisecond,
		"the subscribe reached the upstream")
	go func() { // reading runs the pong handler too
		defer close(frames)
		for {
			_, f, err := ws.ReadMessage()
			if err != nil {
				return
			}
			frames <- string(f)
		}
	}()
	require.NoError(t, ws.WriteControl(websocket.PingMessage, []byte("p"), time.Now().Add(time.Second)))
	require.NoError(t, ws.WriteMessage(websocket.TextMessage, []byte(`{"jsonrpc":"2.0","id":2,"method":"public/test"}`)))
	select {
	case <-pong:
	case <-time.After(500 * time.Millisecond):
		t.Fatal("no pong while the subscribe waits")
	}
	select {
	case f := <-frames:
		assert.Contains(t, f, `"id":2`, "the heartbeat reply is answered first")
		assert.Contains(t, f, `"result"`)
	case <-time.After(500 * time.Millisecond):
		t.Fatal("the heartbeat reply was not answered while the subscribe waits")
	}
	assert.Less(t, time.Since(start), time.Second, "answered before the request timeout")
	b.publish(25) // flows while the subscribe waits

	select {
	case f := <-frames:
		elapsed := time.Since(start)
		assert.Contains(t, f, `"id":1`)
		assert.Contains(t, f, `"error"`, "an error, not an empty success: %s", f)
		assert.NotContains(t, f, `"result"`)
		assert.Contains(t, f, `\"`+probe+`\"`, "the error names the topic")
		assert.Equal(t, 1, strings.Count(f, probe), "the error names the topic once: %s", f)
		// Two timers of 1s race: the sidecar's wait ("no answer from the
		// upstream within 1s") and its upstream client's ("request timed
		// out"); either says why.
		assert.True(t, strings.Contains(f, "no answer from the upstream within 1s") || strings.Contains(f, "request timed out"),
			"the error says the upstream did not answer in time: %s", f)
		assert.GreaterOrEqual(t, elapsed, 900*time.Millisecond, "answered at the timeout, not before")
	case <-time.After(10 * time.Second):
		t.Fatal("the subscribe was not answered after the request timeout")
	}
	b.publish(25)
	b.gotAll(t)
}

// An upstream message on the bystander's topic that is not valid UTF-8
// (bytes 0xff 0xfe in a string) reaches local clients as valid UTF-8
// text with U+FFFD in their place, the connections stay open, the next
// messages flow, and it is counted in /metrics.
func TestProgramInvalidUTF8FromUpstreamMended(t *testing.T) {
	up, p, b := probeProgram(t, thalex.Name, "")

	ws := p.dial(t)
	require.Contains(t, roundTrip(t, ws, `{"id":1,"method":"public/subscribe","params":{"channels":["`+hardenTopic+`"]}}`),
		`"result":["`+hardenTopic+`"]`)
	b.publish(1) // a mark: ws starts after it
	for {
		_, f, err := ws.ReadMessage()
		require.NoError(t, err)
		if strings.Contains(string(f), fmt.Sprintf(`"seq":%d`, b.published-1)) {
			break
		}
	}

	up.Publish(hardenTopic, fmt.Appendf(nil, "{\"seq\":%d,\"name\":\"bad \xff\xfe byte\"}", b.published))
	b.published++
	b.publish(1)

	require.NoError(t, ws.SetReadDeadline(time.Now().Add(10*time.Second)))
	typ, mended, err := ws.ReadMessage()
	require.NoError(t, err)
	assert.Equal(t, websocket.TextMessage, typ)
	assert.True(t, utf8.Valid(mended), "valid UTF-8: %q", mended)
	assert.Contains(t, string(mended), "bad \uFFFD byte")
	_, next, err := ws.ReadMessage()
	require.NoError(t, err, "the connection stays open")
	assert.Contains(t, string(next), fmt.Sprintf(`"seq":%d`, b.published-1), "the next message flows")

	_, metrics := p.get(t, "/metrics", nil)
	assert.Contains(t, metrics, "wsfan_sidecar_upstream_invalid_utf8_total 1")

	b.publish(25)
	b.gotAll(t)
	select {
	case <-b.done:
		t.Fatalf("the bystander's connection ended: %v", b.err)
	default:
	}
}

// A topic name of 200 KiB, over the sidecar's 4 KiB cap on a name, is
// refused with an error answer saying the cap, and never reaches the
// upstream: no subscribe for it, no upstream request beyond the
// bystander's.
func TestProgramOversizedTopicRefused(t *testing.T) {
	up, p, b := probeProgram(t, deribit.Name, "")
	subscribes := up.CountReceived("public/subscribe")

	probe := "ticker." + strings.Repeat("X", 200<<10) + ".100ms"
	stderrBefore := len(p.stderr.String())
	answer := roundTrip(t, p.dial(t), `{"jsonrpc":"2.0","id":5,"method":"public/subscribe","params":{"channels":["`+probe+`"]}}`)
	assert.Contains(t, answer, `"id":5`)
	assert.Contains(t, answer, `"error"`)
	assert.NotContains(t, answer, `"result"`)
	assert.Contains(t, answer, fmt.Sprintf("of %d bytes: at most 4096", len(probe)))
	assert.Contains(t, answer, `"code":-32602`, "the client's mistake, not the upstream's")
	// The name is not repeated whole: the answer, the log line and the
	// refusal kept in /v1/status show at most its first bytes.
	resp, err := http.Get("http://" + p.addr + "/v1/status")
	require.NoError(t, err)
	status, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	assert.Less(t, len(answer), 2<<10, "answer")
	assert.Less(t, len(p.stderr.String())-stderrBefore, 4<<10, "log")
	assert.Less(t, len(status), 64<<10, "/v1/status")
	assert.Contains(t, string(status), fmt.Sprintf("(%d bytes)", len(probe)), "the refusal in /v1/status says the name's size")

	b.publish(25)
	b.gotAll(t)
	assert.Zero(t, up.CountSubscribes(probe), "the topic never reached the upstream")
	assert.Equal(t, subscribes, up.CountReceived("public/subscribe"), "no upstream subscribe beyond the bystander's")
}

// The program's HTTP server closes connections that stop sending. Its
// idle timeout for a keep-alive connection between requests is
// -idle-conn-timeout (5s; pkg/sidecar's TestIdleConnectionsDoNotKeepClientsOut
// checks it, and the reaping near the cap); what is checked here is the
// 10s header timeout (fixed): a keep-alive
// connection that has been answered and then starts a request it never
// finishes, and a connection that never sends anything, are both closed
// by the program (a read returns EOF) about 10s later, not before.
func TestProgramStalledHTTPConnectionClosed(t *testing.T) {
	_, p, b := probeProgram(t, deribit.Name, "")

	const headerTimeout = 10 * time.Second
	silent := rawConn(t, p.addr)
	start := time.Now()
	keptAlive := rawConn(t, p.addr)
	r := bufio.NewReader(keptAlive)
	for i := range 2 { // kept alive: the second request is served on it too
		_, err := io.WriteString(keptAlive, "GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n\r\n")
		require.NoError(t, err)
		resp, err := http.ReadResponse(r, nil)
		require.NoError(t, err, "request %d", i)
		_, err = io.Copy(io.Discard, resp.Body)
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
		assert.Equal(t, http.StatusOK, resp.StatusCode)
		assert.False(t, resp.Close, "the program keeps the connection alive")
	}
	stalled := time.Now()
	_, err := io.WriteString(keptAlive, "GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\n") // never finished
	require.NoError(t, err)
	b.publish(25)

	for _, c := range []struct {
		name  string
		r     io.Reader
		since time.Time
	}{{"the silent connection", silent, start}, {"the stalled keep-alive connection", r, stalled}} {
		n, err := c.r.Read(make([]byte, 1))
		elapsed := time.Since(c.since)
		assert.Zero(t, n, "%s: nothing more is sent", c.name)
		assert.ErrorIs(t, err, io.EOF, "%s is closed by the program", c.name)
		assert.GreaterOrEqual(t, elapsed, headerTimeout-time.Second, "%s: not before the header timeout", c.name)
		assert.Less(t, elapsed, headerTimeout+5*time.Second, "%s: soon after the header timeout", c.name)
	}

	b.publish(25)
	b.gotAll(t)
}

// rawConn opens a TCP connection to addr whose reads give up after 30s,
// closed at the end of the test.
func rawConn(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	require.NoError(t, c.SetReadDeadline(time.Now().Add(30*time.Second)))
	return c
}
