package main

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/pkg/deribit"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// The hardening of pkg/sidecar, checked on the program as deployed (a
// process of its own, see startProgram): each probe is refused while a
// bystander on the same sidecar loses no message.

// hardenTopic is the bystanders' topic.
const hardenTopic = "ticker.BTC-PERPETUAL.100ms"

// probeProgram starts a test exchange of dialect, the program against it
// (with args) and a bystander on hardenTopic (its URL's query is query,
// "" for none) that has already been sent 25 messages: each probe runs
// beside it, and ends checking it lost none.
func probeProgram(t *testing.T, dialect exchangetest.Dialect, query string, args ...string) (*exchangetest.Server, *program, *bystander) {
	t.Helper()
	up := exchangetest.NewServer(dialect)
	t.Cleanup(up.Close) // after the program's, which was registered later
	p := startProgram(t, up, args...)
	b := newBystander(t, up, "ws://"+p.addr+"/ws"+query, hardenTopic)
	b.publish(25)
	return up, p, b
}

// dial opens a local WebSocket connection to the program, closed at the
// end of the test.
func (p *program) dial(t *testing.T) *websocket.Conn {
	t.Helper()
	ws, _, err := websocket.DefaultDialer.Dial("ws://"+p.addr+"/ws", nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ws.Close() })
	return ws
}

// roundTrip sends request on ws and returns its answer: the next frame
// with an id, skipping notifications (of topics ws holds).
func roundTrip(t *testing.T, ws *websocket.Conn, request string) string {
	t.Helper()
	require.NoError(t, ws.WriteMessage(websocket.TextMessage, []byte(request)))
	require.NoError(t, ws.SetReadDeadline(time.Now().Add(10*time.Second)))
	for {
		_, frame, err := ws.ReadMessage()
		require.NoError(t, err)
		var answer struct{ ID json.RawMessage }
		if json.Unmarshal(frame, &answer) == nil && answer.ID != nil {
			return string(frame)
		}
	}
}

// get sends a GET for path to the program with the headers (Host sets the
// Host header) and returns the status code and body.
func (p *program) get(t *testing.T, path string, header map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, "http://"+p.addr+path, nil)
	require.NoError(t, err)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	req.Host = header["Host"]
	client := http.Client{Timeout: 10 * time.Second}
	resp, err := client.Do(req)
	require.NoError(t, err)
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

// A Thalex client that subscribes the bystander's topic and then sends
// Thalex's unsubscribe for it only leaves the topic itself: the sidecar
// answers it, sends no unsubscribe upstream (even past a 1ms grace) and
// the bystander keeps getting the topic.
func TestProgramThalexUnsubscribeStaysLocal(t *testing.T) {
	up, p, b := probeProgram(t, thalex.Name, "", "-grace", "1ms")

	ws := p.dial(t)
	assert.Contains(t, roundTrip(t, ws, `{"id":1,"method":"public/subscribe","params":{"channels":["`+hardenTopic+`"]}}`), `"result":["`+hardenTopic+`"]`)
	answer := roundTrip(t, ws, `{"id":2,"method":"unsubscribe","params":{"channels":["`+hardenTopic+`"]}}`)
	assert.Contains(t, answer, `"id":2`)
	assert.NotContains(t, answer, `"error"`)
	assert.Never(t, func() bool { return up.CountReceived("unsubscribe") > 0 }, 300*time.Millisecond, 10*time.Millisecond,
		"the upstream was asked to unsubscribe the bystander's topic")

	b.publish(25)
	b.gotAll(t)
	assert.Zero(t, up.CountReceived("unsubscribe"))
}

// A Deribit client's private/logout, which would end the session every
// local program shares, is answered by the sidecar with an error saying
// it is not forwarded and never reaches the upstream.
func TestProgramDeribitLogoutNotForwarded(t *testing.T) {
	up, p, b := probeProgram(t, deribit.Name, "")

	answer := roundTrip(t, p.dial(t), `{"jsonrpc":"2.0","id":9,"method":"private/logout","params":{}}`)
	assert.Contains(t, answer, `"id":9`)
	assert.Contains(t, answer, `"error"`)
	assert.Contains(t, answer, "is not forwarded")
	assert.Zero(t, up.CountReceived("private/logout"))

	b.publish(25)
	b.gotAll(t)
}

// A browser's request for the stream from a page of another site (an
// <img>: Sec-Fetch-Site: cross-site, no Origin) is refused and subscribes
// nothing upstream; the refusal is counted.
func TestProgramCrossSiteStreamRefused(t *testing.T) {
	up, p, b := probeProgram(t, deribit.Name, "")

	const probe = "ticker.ETH-PERPETUAL.100ms"
	code, body := p.get(t, "/v1/stream?topic="+probe, map[string]string{"Sec-Fetch-Site": "cross-site"})
	assert.Equal(t, http.StatusForbidden, code, body)
	assert.Contains(t, body, "-allowed-origins")
	assert.Zero(t, up.CountSubscribes(probe))
	_, metrics := p.get(t, "/metrics", nil)
	assert.Contains(t, metrics, "wsfan_sidecar_cross_site_refusals_total 1")

	b.publish(25)
	b.gotAll(t)
	assert.Zero(t, up.CountSubscribes(probe))
}

// With -token, 50 requests with a wrong token (as ?token= and as a Bearer
// header) are each refused with 401, counted in /metrics, and logged once
// for the address, not 50 times.
func TestProgramWrongTokensRefused(t *testing.T) {
	const token = "s3cret-token"
	_, p, b := probeProgram(t, thalex.Name, "?token="+token, "-token", token)

	for i := range 50 {
		path, header := "/v1/status?token=wrong", map[string]string(nil)
		if i%2 == 1 {
			path, header = "/v1/status", map[string]string{"Authorization": "Bearer wrong"}
		}
		code, _ := p.get(t, path, header)
		require.Equal(t, http.StatusUnauthorized, code, "request %d", i)
	}
	code, metrics := p.get(t, "/metrics", map[string]string{"Authorization": "Bearer " + token})
	require.Equal(t, http.StatusOK, code)
	assert.Contains(t, metrics, "wsfan_sidecar_token_refusals_total 50")
	const line = "refused a request with a missing or wrong token"
	require.Eventually(t, func() bool { return strings.Contains(p.stderr.String(), line) }, 5*time.Second, 10*time.Millisecond,
		"stderr:\n%s", p.stderr)
	assert.Equal(t, 1, strings.Count(p.stderr.String(), line), "logged once for the address")
	assert.NotContains(t, p.stderr.String(), token, "the token is never logged")

	b.publish(25)
	b.gotAll(t)
}

// A request naming a host the sidecar was not told it has (DNS
// rebinding) is refused with 403 naming the host and the setting, and
// counted.
func TestProgramForeignHostRefused(t *testing.T) {
	_, p, b := probeProgram(t, deribit.Name, "")

	code, body := p.get(t, "/v1/status", map[string]string{"Host": "evil.example:80"})
	assert.Equal(t, http.StatusForbidden, code, body)
	assert.Contains(t, body, `"evil.example"`)
	assert.Contains(t, body, "-allowed-hosts")
	_, metrics := p.get(t, "/metrics", nil)
	assert.Contains(t, metrics, "wsfan_sidecar_host_refusals_total 1")

	b.publish(25)
	b.gotAll(t)
}
