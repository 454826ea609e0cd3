package main

import (
	"bufio"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// The secrets an upstream URL and header carry, each unique enough that
// finding it anywhere is a leak.
const (
	secretPassword = "pass0word9Q"
	secretPathKey  = "a1b2c3d4e5f60718293a4b5c6d7e8f90"
	secretQueryKey = "k3y5ecret99Z"
	secretHeader   = "hdr0s3cret0key77"
)

var secrets = []string{secretPassword, secretPathKey, secretQueryKey, secretHeader, "user:"}

// secretURL is addr's WebSocket URL with a key in each place providers
// put one.
func secretURL(addr string) string {
	return "ws://user:" + secretPassword + "@" + addr + "/v3/" + secretPathKey + "?apikey=" + secretQueryKey
}

// assertNoSecret fails if any secret appears in what was shown.
func assertNoSecret(t *testing.T, where, shown string) {
	t.Helper()
	require.NotEmpty(t, shown, where)
	for _, s := range secrets {
		assert.NotContains(t, shown, s, "%s shows a secret", where)
	}
}

// An upstream URL with userinfo, a key path segment and a key query
// value, and a key in -upstream-header: none appears in /v1/status, the
// status page and its stream, /metrics, the logs (JSON and console) or
// what a local client receives; the URL is shown redacted, with its host
// and path shape.
func TestSecretsNeverShown(t *testing.T) {
	// The exchange requires the header's key: the sidecar connecting
	// proves the header was sent.
	up := exchangetest.NewServer(thalex.Name, exchangetest.WithBearerToken(secretHeader))
	defer up.Close()
	for _, format := range []string{"json", "console"} {
		t.Run(format, func(t *testing.T) {
			var logs lockedBuffer
			r := startSidecar(t, map[string]string{"WSFAN_UPSTREAM": secretURL(up.Addr())}, &logs,
				"-upstream-header", "Authorization: Bearer "+secretHeader, "-log-format", format, "-log-level", "debug")
			base := "http://" + r.addr

			status := waitStatus(t, base, `"state": "connected"`)
			assertNoSecret(t, "/v1/status", status)
			assert.Contains(t, status, `"url": "ws://`+up.Addr()+`/v3/REDACTED?apikey=REDACTED"`)

			assertNoSecret(t, "/", get(t, base+"/"))
			assertNoSecret(t, "/metrics", get(t, base+"/metrics"))
			assertNoSecret(t, "/v1/status/stream", firstEvent(t, base+"/v1/status/stream"))

			// A local client subscribes and makes a call the upstream refuses.
			ws, _, err := websocket.DefaultDialer.Dial("ws://"+r.addr+"/ws", nil)
			require.NoError(t, err)
			defer func() { _ = ws.Close() }()
			var got strings.Builder
			for _, req := range []string{
				`{"jsonrpc":"2.0","id":1,"method":"public/subscribe","params":{"channels":["ticker.BTC-PERPETUAL.raw"]}}`,
				`{"jsonrpc":"2.0","id":2,"method":"public/no_such_method","params":{}}`,
			} {
				require.NoError(t, ws.WriteMessage(websocket.TextMessage, []byte(req)))
			}
			require.NoError(t, ws.SetReadDeadline(time.Now().Add(10*time.Second)))
			for answered := 0; answered < 2; {
				_, msg, err := ws.ReadMessage()
				require.NoError(t, err)
				got.Write(msg)
				if strings.Contains(string(msg), `"id":`) {
					answered++
				}
			}
			assertNoSecret(t, "the local client's frames", got.String())

			r.stop(t)
			assertNoSecret(t, format+" logs", logs.String())
			assert.Contains(t, logs.String(), up.Addr()+"/v3/REDACTED?apikey=REDACTED", "the logs name the upstream, redacted")
		})
	}
}

// An upstream that refuses the connection: the dial-failure lines (the
// sidecar's and the SDK's) and the error a local call gets while it is
// down show no secret.
func TestSecretsNeverShownWhileDialFails(t *testing.T) {
	closed := freeAddr(t) // nothing listens there
	var logs lockedBuffer
	r := startSidecar(t, map[string]string{"WSFAN_UPSTREAM": secretURL(closed)}, &logs,
		"-upstream-header", "X-Api-Key: "+secretHeader, "-request-timeout", "300ms", "-log-level", "debug")
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(logs.String(), "first connect failed"); time.Sleep(10 * time.Millisecond) {
		require.True(t, time.Now().Before(deadline), "no dial failure logged: %s", logs.String())
	}

	ws, _, err := websocket.DefaultDialer.Dial("ws://"+r.addr+"/ws", nil)
	require.NoError(t, err)
	defer func() { _ = ws.Close() }()
	require.NoError(t, ws.WriteMessage(websocket.TextMessage, []byte(`{"jsonrpc":"2.0","id":7,"method":"public/time","params":{}}`)))
	require.NoError(t, ws.SetReadDeadline(time.Now().Add(10*time.Second)))
	_, msg, err := ws.ReadMessage()
	require.NoError(t, err)
	assert.Contains(t, string(msg), `"error"`)
	assertNoSecret(t, "a call's error", string(msg))
	assertNoSecret(t, "/v1/status", get(t, "http://"+r.addr+"/v1/status"))

	r.stop(t)
	assertNoSecret(t, "logs", logs.String())
	assert.Contains(t, logs.String(), closed+"/v3/REDACTED")
}

// A refused -upstream or -upstream-header value is named in the error
// with its secrets hidden, from the command line, a variable or the file.
func TestSecretSettingErrorsHideValues(t *testing.T) {
	bad := "http://user:" + secretPassword + "@node.example/v3/" + secretPathKey
	for _, tc := range []struct {
		args []string
		env  map[string]string
	}{
		{args: []string{"-upstream", bad}},
		{args: []string{"-upstream=" + bad}},
		{env: map[string]string{"WSFAN_UPSTREAM": bad}},
		{args: []string{"-upstream-header", "X-Api-Key " + secretHeader}},
		{env: map[string]string{"WSFAN_UPSTREAM_HEADER": "X-Api-Key " + secretHeader}},
	} {
		_, err := parseOptions(tc.args, func(k string) string { return tc.env[k] }, io.Discard)
		require.Error(t, err, "%v %v", tc.args, tc.env)
		assertNoSecret(t, "the error", err.Error())
		assert.Contains(t, strings.ToLower(err.Error()), "upstream", "names the setting")
	}
}

// waitStatus polls /v1/status until it contains want and returns it.
func waitStatus(t *testing.T, base, want string) string {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		body := get(t, base+"/v1/status")
		if strings.Contains(body, want) {
			return body
		}
		require.True(t, time.Now().Before(deadline), "status never showed %s: %s", want, body)
	}
}

// get returns a 200 response's body.
func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s: %s", url, b)
	return string(b)
}

// firstEvent returns the first data line of an SSE stream.
func firstEvent(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer func() { _ = resp.Body.Close() }()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data:"); ok {
			return data
		}
	}
	t.Fatalf("no event from %s: %v", url, sc.Err())
	return ""
}
