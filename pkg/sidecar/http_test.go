package sidecar_test

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/sidecar"
)

// SSE streams each message as an event named after its topic.
func TestSSEDelivers(t *testing.T) {
	r := newRig(t, exchangetest.Thalex, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, r.url+"/v1/stream?topic=a.b&topic=c.d", nil)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.EqualValues(t, http.StatusOK, resp.StatusCode)
	require.EqualValues(t, "text/event-stream", resp.Header.Get("Content-Type"))
	br := bufio.NewReader(resp.Body)
	line, err := br.ReadString('\n')
	require.NoError(t, err)
	require.EqualValues(t, ": wsfan sidecar: streaming a.b, c.d\n", line)
	r.waitClients(t, 1, 2)
	r.up.Publish("c.d", []byte("{\"x\":\n1}"))
	r.up.Publish("a.b", []byte(`[2]`))
	// Order holds per topic; two topics have two pumps.
	events := map[string]bool{}
	for range 2 {
		var ev strings.Builder
		for {
			line, err := br.ReadString('\n')
			require.NoError(t, err)
			if line == "\n" {
				if ev.Len() > 0 {
					break
				}
				continue
			}
			ev.WriteString(line)
		}
		events[ev.String()] = true
	}
	if !events["event: c.d\ndata: {\"x\": 1}\n"] || !events["event: a.b\ndata: [2]\n"] {
		t.Fatalf("got events %v", events)
	}

	code, body := httpGet(t, r.url+"/v1/stream")
	require.EqualValues(t, http.StatusBadRequest, code)
	if !strings.Contains(body, "topic") {
		t.Fatalf("unhelpful error %q", body)
	}
}

// A topic the sidecar cannot subscribe fails the whole stream with a
// reason naming it, and the stream holds nothing.
func TestSSERefusedTopic(t *testing.T) {
	r := newRig(t, exchangetest.Thalex, nil)
	r.up.SetRefused("c.d")
	code, body := httpGet(t, r.url+"/v1/stream?topic=a.b&topic=c.d")
	require.Equal(t, http.StatusBadGateway, code)
	assert.Contains(t, body, "failed to subscribe c.d: ")
	// a.b was subscribed, and is let go after its grace period.
	require.NoError(t, r.up.WaitReceived(testutil.Context(t), "public/unsubscribe", 1))

	code, body = httpGet(t, r.url+"/v1/stream?topic=bad%20name")
	require.Equal(t, http.StatusBadGateway, code)
	assert.Contains(t, body, "failed to subscribe bad name: protocol: invalid topic")
	assert.Empty(t, r.sc.Status().Clients)
}

// Errors name the sidecar once: the command prints its name before them.
func TestNewErrors(t *testing.T) {
	for cfg, want := range map[*sidecar.Config]string{
		{}: "no upstream: Config.Upstream is required",
		{Upstream: "ws://127.0.0.1:1", Listen: "0.0.0.0:1"}: "listening on 0.0.0.0:1 (not loopback) requires a token",
		{Upstream: "ws://127.0.0.1:1", Protocol: "smoke"}:   `protocol: unknown dialect "smoke" (want thalex, deribit, ethereum or ethereal)`,
	} {
		_, err := sidecar.New(*cfg)
		assert.EqualError(t, err, want)
	}
}

// Status, metrics, health and readiness.
func TestEndpoints(t *testing.T) {
	r := newRig(t, exchangetest.Thalex, nil)
	a := r.dial(t)
	subscribeAll(t, dialects[0], a)
	r.waitClients(t, 1, 1)
	r.up.Publish(dialects[0].topic, []byte(payload(1)))
	expectFrame(t, dialects[0], a, "", 1)

	code, body := httpGet(t, r.url+"/v1/status")
	require.EqualValues(t, http.StatusOK, code)
	for _, want := range []string{`"state": "connected"`, `"topic": "ticker.BTC-PERPETUAL.raw"`, `"refs": 1`, `"kind": "websocket"`} {
		if !strings.Contains(body, want) {
			t.Fatalf("status lacks %s:\n%s", want, body)
		}
	}
	code, body = httpGet(t, r.url+"/metrics")
	require.EqualValues(t, http.StatusOK, code)
	for _, want := range []string{`wsfan_sidecar_clients{kind="websocket"} 1`,
		`wsfan_sidecar_topic_received_total{topic="ticker.BTC-PERPETUAL.raw"} 1`,
		`wsfan_sidecar_upstream_connected 1`, `wsfan_client_frames_total{connection="upstream"}`} {
		if !strings.Contains(body, want) {
			t.Fatalf("metrics lack %s", want)
		}
	}
	code, _ = httpGet(t, r.url+"/healthz")
	require.EqualValues(t, http.StatusOK, code)
	code, _ = httpGet(t, r.url+"/readyz")
	require.EqualValues(t, http.StatusOK, code)
	r.up.Stop()
	waitFor(t, "not ready", func() bool { code, _ := httpGet(t, r.url+"/readyz"); return code == http.StatusServiceUnavailable })
	require.NoError(t, r.up.Start())
	waitFor(t, "ready again", func() bool { code, _ := httpGet(t, r.url+"/readyz"); return code == http.StatusOK })
}

// A token is required everywhere but the probes, compared in constant
// time, from the header or the query; a public listener needs one.
func TestToken(t *testing.T) {
	up := exchangetest.NewServer(exchangetest.Thalex)
	defer up.Close()
	_, err := sidecar.New(sidecar.Config{Upstream: up.URL(), Listen: "0.0.0.0:8765"})
	if err == nil || !strings.Contains(err.Error(), "requires a token") {
		t.Fatalf("a public listener without a token: %v", err)
	}
	sc, err := sidecar.New(sidecar.Config{Upstream: up.URL(), Listen: "0.0.0.0:8765", Token: "s3cret"})
	require.NoError(t, err)
	defer sc.Close()
	h := sc.Handler()
	do := func(path, auth string) int {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w.Code
	}
	require.EqualValues(t, http.StatusUnauthorized, do("/v1/status", ""))
	require.EqualValues(t, http.StatusUnauthorized, do("/v1/status", "Bearer wrong"))
	require.EqualValues(t, http.StatusUnauthorized, do("/ws", ""))
	require.EqualValues(t, http.StatusUnauthorized, do("/v1/stream?topic=a", ""))
	require.EqualValues(t, http.StatusUnauthorized, do("/metrics?token=s3cre", ""))
	require.EqualValues(t, http.StatusOK, do("/v1/status", "Bearer s3cret"))
	require.EqualValues(t, http.StatusOK, do("/metrics?token=s3cret", ""))
	require.EqualValues(t, http.StatusOK, do("/healthz", ""))
}
