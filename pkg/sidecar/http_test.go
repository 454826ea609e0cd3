package sidecar_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/format"
	"github.com/wsfan/wsfan/internal/sidecartest"
	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/sidecar"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// SSE streams each message as a default message event carrying its topic
// and an id, so EventSource.onmessage sees it and can resume; the stream
// opens with a retry hint.
func TestSSEDelivers(t *testing.T) {
	r := newRig(t, thalex.Name, nil)
	st := openSSE(t, r.url+"/v1/stream?topic=a.b&topic=c.d", "")
	require.Equal(t, sseEvent{comment: "wsfan sidecar: streaming a.b, c.d", retry: "2000"}, st.next(t))
	r.waitClients(t, 1, 2)
	r.up.Publish("c.d", []byte("{\"x\":\n1}"))
	r.up.Publish("a.b", []byte(`[2]`))
	// Order holds per topic; two topics have two pumps.
	got := map[string]bool{}
	for range 2 {
		ev := st.next(t)
		assert.NotEmpty(t, ev.id)
		assert.Empty(t, ev.event, "a default message event")
		got[ev.data] = true
	}
	assert.Equal(t, map[string]bool{`{"topic":"c.d","data":{"x": 1}}`: true, `{"topic":"a.b","data":[2]}`: true}, got)

	code, body := httpGet(t, r.url+"/v1/stream")
	require.EqualValues(t, http.StatusBadRequest, code)
	if !strings.Contains(body, "topic") {
		t.Fatalf("unhelpful error %q", body)
	}
	code, body = httpGet(t, r.url+"/v1/stream?topic=a.b&event=loud")
	require.EqualValues(t, http.StatusBadRequest, code)
	assert.Contains(t, body, "message (the default) or topic")
}

// With ?event=topic each event is named after its topic and carries the
// payload alone.
func TestSSENamedEvents(t *testing.T) {
	r := newRig(t, thalex.Name, nil)
	st := openSSE(t, r.url+"/v1/stream?topic=a.b&event=topic", "")
	st.next(t)
	r.waitClients(t, 1, 1)
	r.up.Publish("a.b", []byte(`{"p":1}`))
	ev := st.next(t)
	assert.Equal(t, "a.b", ev.event)
	assert.Equal(t, `{"p":1}`, ev.data)
	assert.NotEmpty(t, ev.id)
}

// A stream cut and opened again with Last-Event-ID gets the messages it
// missed from the topic's history, then the live ones, with no loss and
// no repeat; when the history no longer holds them all, a gap mark comes
// first; an id that is not this sidecar's resumes nothing and says so.
func TestSSEResumesFromLastEventID(t *testing.T) {
	r := newRig(t, thalex.Name, func(c *sidecar.Config) { c.SSEHistory = 5; c.Grace = time.Minute })
	st := openSSE(t, r.url+"/v1/stream?topic=a.b", "")
	st.next(t)
	r.waitClients(t, 1, 1)
	publish := func(from, to int) {
		for n := from; n <= to; n++ {
			r.up.Publish("a.b", fmt.Appendf(nil, `{"n":%d}`, n))
		}
	}
	publish(1, 2)
	st.next(t)
	last := st.next(t)
	require.Equal(t, `{"topic":"a.b","data":{"n":2}}`, last.data)
	st.close()
	r.waitClients(t, 0, 0)

	publish(3, 5) // missed while away; the topic stays open in its grace period
	waitFor(t, "the missed messages published", func() bool { return topicReceived(r, "a.b") == 5 })
	st = openSSE(t, r.url+"/v1/stream?topic=a.b", last.id)
	st.next(t)
	for n := 3; n <= 5; n++ {
		assert.Equal(t, fmt.Sprintf(`{"topic":"a.b","data":{"n":%d}}`, n), st.next(t).data)
	}
	r.waitClients(t, 1, 1)
	publish(6, 6)
	ev := st.next(t)
	assert.Equal(t, `{"topic":"a.b","data":{"n":6}}`, ev.data, "then live, nothing twice")
	st.close()
	r.waitClients(t, 0, 0)

	publish(7, 14) // more than the history's 5
	waitFor(t, "the missed messages published", func() bool { return topicReceived(r, "a.b") == 14 })
	st = openSSE(t, r.url+"/v1/stream?topic=a.b&lastEventId="+ev.id, "")
	st.next(t)
	assert.Equal(t, `{"topic":"a.b","gap":true}`, st.next(t).data, "the history lost some")
	for n := 10; n <= 14; n++ {
		assert.Equal(t, fmt.Sprintf(`{"topic":"a.b","data":{"n":%d}}`, n), st.next(t).data)
	}
	st.close()
	r.waitClients(t, 0, 0)

	st = openSSE(t, r.url+"/v1/stream?topic=a.b", "another-sidecar-7")
	st.next(t)
	assert.Equal(t, `{"topic":"a.b","gap":true}`, st.next(t).data, "a position this sidecar never gave")
}

// With Config.Topics the sidecar refuses any other topic itself, naming
// those it offers, and asks nothing upstream.
func TestOfferedTopicsOnly(t *testing.T) {
	r := newRig(t, thalex.Name, func(c *sidecar.Config) { c.Topics = []string{"a.b", "c.d"} })
	code, body := httpGet(t, r.url+"/v1/stream?topic=a.c")
	assert.EqualValues(t, http.StatusNotFound, code, "the client's mistake")
	assert.Contains(t, refusalText(t, body), `unknown topic "a.c": this sidecar offers "a.b", "c.d"`)
	assert.Zero(t, r.up.CountSubscribes("a.c"), "nothing asked upstream")
	refusals := r.sc.Status().Refusals
	require.Len(t, refusals, 1, "the refusal is in /v1/status")
	assert.Equal(t, []string{"a.c"}, refusals[0].Topics)
	assert.Equal(t, "sse", refusals[0].Kind)
	assert.Contains(t, refusals[0].Reason, `unknown topic "a.c"`)
	offered := r.sc.Status().Offered
	require.Len(t, offered, 2)
	assert.Equal(t, sidecar.OfferedTopic{Topic: "a.b", StreamPath: "v1/stream?topic=a.b",
		SubscribeFrame: `{"jsonrpc":"2.0","id":1,"method":"public/subscribe","params":{"channels":["a.b"]}}`}, offered[0])
	assert.Equal(t, "c.d", offered[1].Topic)
}

// With the upstream unreachable, /v1/status says why: the last dial
// error, the attempts since it was last up and when the next one comes.
func TestStatusExplainsUnreachableUpstream(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	upstream := "ws://" + ln.Addr().String() + "/ws"
	require.NoError(t, ln.Close()) // every dial is refused from now on
	served := sidecartest.Serve(t, sidecar.Config{Upstream: upstream, Protocol: thalex.Name})
	var st sidecar.Status
	require.Eventually(t, func() bool {
		st = served.Server.Status()
		return st.Upstream.Attempts >= 2
	}, 10*time.Second, 20*time.Millisecond)
	assert.Equal(t, "connecting", st.Upstream.State)
	assert.Contains(t, st.Upstream.LastError, "connection refused")
	require.NotNil(t, st.Upstream.LastErrorAt)
	require.NotNil(t, st.Upstream.NextRetry)
	assert.False(t, st.Upstream.NextRetry.Before(*st.Upstream.LastErrorAt), "the next try comes after the failure")
}

// topicReceived returns how many messages the sidecar received on topic.
func topicReceived(r *rig, topic string) uint64 {
	for _, ts := range r.sc.Status().Topics {
		if ts.Topic == topic {
			return ts.Received
		}
	}
	return 0
}

// sseEvent is one event (or the opening comment block) of a stream.
type sseEvent struct{ comment, retry, id, event, data string }

// sseReader reads a stream's events.
type sseReader struct {
	resp *http.Response
	br   *bufio.Reader
	stop context.CancelFunc
}

// openSSE opens url as EventSource would, with lastEventID when not empty.
func openSSE(t *testing.T, url, lastEventID string) *sseReader {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	require.NoError(t, err)
	req.Header.Set("Accept", "text/event-stream")
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.EqualValues(t, http.StatusOK, resp.StatusCode)
	require.EqualValues(t, "text/event-stream", resp.Header.Get("Content-Type"))
	st := &sseReader{resp: resp, br: bufio.NewReader(resp.Body), stop: cancel}
	t.Cleanup(st.close)
	return st
}

// next reads the next event: the lines up to a blank one.
func (st *sseReader) next(t *testing.T) sseEvent {
	t.Helper()
	var ev sseEvent
	for {
		line, err := st.br.ReadString('\n')
		require.NoError(t, err)
		line = strings.TrimSuffix(line, "\n")
		if line == "" {
			if ev != (sseEvent{}) {
				return ev
			}
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "":
			ev.comment = value
		case "retry":
			ev.retry = value
		case "id":
			ev.id = value
		case "event":
			ev.event = value
		case "data":
			ev.data = value
		}
	}
}

func (st *sseReader) close() {
	st.stop()
	_ = st.resp.Body.Close()
}

// A topic the sidecar cannot subscribe fails the whole stream with a
// reason naming it, and the stream holds nothing.
func TestSSERefusedTopic(t *testing.T) {
	r := newRig(t, thalex.Name, nil)
	r.up.SetRefused("c.d")
	code, body := httpGet(t, r.url+"/v1/stream?topic=a.b&topic=c.d")
	require.Equal(t, http.StatusBadGateway, code, "the upstream refused")
	text := refusalText(t, body)
	assert.Contains(t, text, `server refused "c.d"`)
	assert.Equal(t, 1, strings.Count(text, "c.d"), "the topic is named once: %s", text)
	// a.b was subscribed, and is let go after its grace period.
	require.NoError(t, r.up.WaitReceived(testutil.Context(t), "unsubscribe", 1))

	code, body = httpGet(t, r.url+"/v1/stream?topic=bad%20name")
	require.Equal(t, http.StatusNotFound, code, "not a topic of the dialect")
	text = refusalText(t, body)
	assert.Contains(t, text, `unknown topic: protocol: invalid topic: thalex channel "bad name"`)
	assert.Equal(t, 1, strings.Count(text, "bad name"), "the topic is named once: %s", text)
	assert.Empty(t, r.sc.Status().Clients)
}

// Errors name the sidecar once: the command prints its name before them.
func TestNewErrors(t *testing.T) {
	// The registered dialects, as the errors list them: the four venues,
	// and the test dialects this package's tests register as they run.
	registered := format.OneOf(protocol.Names())
	for cfg, want := range map[*sidecar.Config]string{
		{}:                             "no upstream: Config.Upstream is required",
		{Upstream: "ws://127.0.0.1:1"}: "no protocol: Config.Protocol is required, one of the registered dialects: " + registered,
		{Upstream: "ws://127.0.0.1:1", Protocol: "thalex", Listen: "0.0.0.0:1"}: "listening on 0.0.0.0:1 (not loopback) requires a token",
		{Upstream: "ws://127.0.0.1:1", Protocol: "smoke"}: `protocol: unknown dialect "smoke" (want ` + registered +
			`): a dialect is registered by importing its exchange's package, as in import _ "github.com/wsfan/wsfan/pkg/smoke" for one of wsfan's`,
	} {
		_, err := sidecar.New(*cfg)
		assert.EqualError(t, err, want)
	}
}

// Status, metrics, health and readiness.
func TestEndpoints(t *testing.T) {
	r := newRig(t, thalex.Name, nil)
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
	up := exchangetest.NewServer(thalex.Name)
	defer up.Close()
	_, err := sidecar.New(sidecar.Config{Upstream: up.URL(), Protocol: thalex.Name, Listen: "0.0.0.0:8765"})
	if err == nil || !strings.Contains(err.Error(), "requires a token") {
		t.Fatalf("a public listener without a token: %v", err)
	}
	sc, err := sidecar.New(sidecar.Config{Upstream: up.URL(), Protocol: thalex.Name, Listen: "0.0.0.0:8765", Token: "s3cret"})
	require.NoError(t, err)
	defer sc.Close()
	h := sc.Handler()
	do := func(path, auth string) int {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		req.Host = "127.0.0.1:8765" // httptest's example.com is refused by the Host check
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
	require.EqualValues(t, http.StatusUnauthorized, do("/", ""), "the status page")
	require.EqualValues(t, http.StatusOK, do("/?token=s3cret", ""))
	require.EqualValues(t, http.StatusUnauthorized, do("/v1/status/stream", ""))
}

// The status page is served at / to anything but a WebSocket upgrade,
// from the binary, with nothing fetched from elsewhere; its data comes
// live from /v1/status/stream, a message event of /v1/status's JSON.
func TestStatusPage(t *testing.T) {
	r := newRig(t, thalex.Name, nil)
	code, body := httpGet(t, r.url+"/")
	require.EqualValues(t, http.StatusOK, code)
	assert.Contains(t, body, "<title>wsfan sidecar</title>")
	assert.Contains(t, body, `new EventSource("v1/status/stream"`)
	assert.NotContains(t, body, "http://", "nothing from elsewhere")
	assert.NotContains(t, body, "https://", "nothing from elsewhere")

	ws := r.dial(t)
	testutil.Send(t, ws, `{"id":1,"method":"public/subscribe","params":{"channels":["a.b"]}}`)
	testutil.Recv(t, ws)
	st := openSSE(t, r.url+"/v1/status/stream", "")
	var status sidecar.Status
	require.NoError(t, json.Unmarshal([]byte(st.next(t).data), &status))
	assert.Equal(t, "connected", status.Upstream.State)
	require.Len(t, status.Topics, 1)
	assert.Equal(t, "a.b", status.Topics[0].Topic)
	assert.Len(t, status.Clients, 1)
	require.NoError(t, json.Unmarshal([]byte(st.next(t).data), &status), "and again a second later")
}

// refusalText is the error of a refusal's JSON body.
func refusalText(t *testing.T, body string) string {
	t.Helper()
	var r struct{ Error string }
	require.NoError(t, json.Unmarshal([]byte(body), &r), body)
	return r.Error
}

// Addr is the address the server listens on, the port the system chose
// for :0 included, so a program can tell its clients where to connect.
func TestAddrIsTheListenersOnceServing(t *testing.T) {
	up := exchangetest.NewServer(thalex.Name)
	t.Cleanup(up.Close)
	srv, err := sidecar.New(sidecar.Config{Upstream: up.URL(), Protocol: thalex.Name, Listen: "127.0.0.1:0", DrainTimeout: time.Second})
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.1:0", srv.Addr(), "the configured address before serving")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.ListenAndServe(ctx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	require.Eventually(t, func() bool { return srv.Addr() != "127.0.0.1:0" }, 5*time.Second, 5*time.Millisecond)
	code, _ := httpGet(t, "http://"+srv.Addr()+"/healthz")
	assert.Equal(t, http.StatusOK, code)
}

// Over HTTP/1.1 a stream's connection is the sidecar's own: the response
// ends with it (Connection: close, no chunked body), so the events go out
// as written. Over HTTP/2, which cannot hand a connection over, the
// handler writes them through net/http: the same events either way.
func TestSSEOverHTTP1AndHTTP2(t *testing.T) {
	r := newRig(t, thalex.Name, nil)
	st := openSSE(t, r.url+"/v1/stream?topic=a.b", "")
	assert.True(t, st.resp.Close, "the stream ends with its connection")
	assert.Empty(t, st.resp.TransferEncoding, "the body is not chunked")
	st.next(t)
	r.waitClients(t, 1, 1)
	r.up.Publish("a.b", []byte(`[1]`))
	assert.Equal(t, `{"topic":"a.b","data":[1]}`, st.next(t).data)
	st.close()
	r.waitClients(t, 0, 1)

	hs := httptest.NewUnstartedServer(r.sc.Handler())
	hs.EnableHTTP2 = true
	hs.StartTLS()
	t.Cleanup(hs.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, hs.URL+"/v1/stream?topic=a.b", nil)
	require.NoError(t, err)
	resp, err := hs.Client().Do(req)
	require.NoError(t, err)
	h2 := &sseReader{resp: resp, br: bufio.NewReader(resp.Body), stop: cancel}
	t.Cleanup(h2.close)
	require.Equal(t, 2, resp.ProtoMajor)
	require.EqualValues(t, http.StatusOK, resp.StatusCode)
	h2.next(t)
	r.waitClients(t, 1, 1)
	r.up.Publish("a.b", []byte(`[2]`))
	assert.Equal(t, `{"topic":"a.b","data":[2]}`, h2.next(t).data)
}

// An SSE client that stops reading is a slow consumer like a WebSocket
// one: once its queue is over the limit the sidecar closes its stream,
// counted as slow, and a new stream of the topic is served as before.
func TestSSEStreamThatStopsReadingIsClosed(t *testing.T) {
	r := newRig(t, thalex.Name, func(c *sidecar.Config) { c.QueueBytes = 64 << 10 })
	host := strings.TrimPrefix(r.url, "http://")
	nc, err := net.Dial("tcp", host)
	require.NoError(t, err)
	t.Cleanup(func() { _ = nc.Close() })
	_, err = fmt.Fprintf(nc, "GET /v1/stream?topic=a.b HTTP/1.1\r\nHost: %s\r\n\r\n", host)
	require.NoError(t, err)
	r.waitClients(t, 1, 1)

	payload := []byte(`{"pad":"` + strings.Repeat("x", 4000) + `"}`)
	published := uint64(0)
	waitFor(t, "the stalled stream closed", func() bool {
		for range 100 { // 400 KB a round: the socket buffers fill, then the queue
			published += uint64(r.up.Publish("a.b", payload)) // 0 until the exchange has the subscription
		}
		return len(r.sc.Status().Clients) == 0
	})
	waitFor(t, "the burst through the topic", func() bool {
		// Every message the test exchange sent reached the topic, or was
		// dropped upstream because the topic's pump fell behind (a
		// loaded machine); or the topic, which nobody held any more, is
		// gone after its grace period, and what was still on its way with
		// it.
		ts := r.sc.Status().Topics
		return len(ts) == 0 || ts[0].Received+ts[0].UpstreamDropped == published
	})
	_, metrics := httpGet(t, r.url+"/metrics")
	assert.Contains(t, metrics, `wsfan_sidecar_disconnects_total{reason="slow_consumer"} 1`)

	st := openSSE(t, r.url+"/v1/stream?topic=a.b", "")
	st.next(t)
	r.waitClients(t, 1, 1)
	r.up.Publish("a.b", []byte(`[1]`))
	ev := st.next(t)
	if strings.Contains(ev.data, `"pad"`) { // the topic's last message, cached, comes first
		ev = st.next(t)
	}
	assert.Equal(t, `{"topic":"a.b","data":[1]}`, ev.data)
}
