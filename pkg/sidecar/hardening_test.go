package sidecar_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/deribit"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/sidecar"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// A browser's request for a page of another site, such as an <img>
// pointing at the stream (Sec-Fetch-Site: cross-site, no Origin), is
// refused before it subscribes anything; an allowed origin's EventSource
// (which names its origin) is served, and so are programs, which send no
// fetch metadata, and the sidecar's own page (same-origin).
func TestCrossSiteRequestRefused(t *testing.T) {
	r := newRig(t, thalex.Name, func(c *sidecar.Config) { c.AllowedOrigins = []string{"http://localhost:3000"} })
	get := func(site, origin string) (int, string) {
		req, err := http.NewRequestWithContext(testutil.Context(t), http.MethodGet, r.url+"/v1/status", nil)
		require.NoError(t, err)
		if site != "" {
			req.Header.Set("Sec-Fetch-Site", site)
		}
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer func() { _ = resp.Body.Close() }()
		var b strings.Builder
		buf := make([]byte, 1024)
		n, _ := resp.Body.Read(buf)
		b.Write(buf[:n])
		return resp.StatusCode, b.String()
	}
	code, body := get("cross-site", "")
	assert.Equal(t, http.StatusForbidden, code)
	assert.Contains(t, body, "-allowed-origins")
	code, _ = get("same-site", "http://localhost:4000")
	assert.Equal(t, http.StatusForbidden, code, "another port of localhost, not listed")
	code, _ = get("cross-site", "http://localhost:3000")
	assert.Equal(t, http.StatusOK, code, "an allowed origin")
	code, _ = get("same-origin", "")
	assert.Equal(t, http.StatusOK, code)
	code, _ = get("", "")
	assert.Equal(t, http.StatusOK, code, "a program")

	// An <img> on the stream subscribes nothing upstream.
	req, err := http.NewRequestWithContext(testutil.Context(t), http.MethodGet, r.url+"/v1/stream?topic=ticker.BTC-PERPETUAL.raw", nil)
	require.NoError(t, err)
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_ = resp.Body.Close()
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
	assert.Zero(t, r.up.CountSubscribes("ticker.BTC-PERPETUAL.raw"))
	_, metrics := httpGet(t, r.url+"/metrics")
	assert.Contains(t, metrics, "wsfan_sidecar_cross_site_refusals_total 3")
}

// Wrong tokens are counted and logged once per address; a short token off
// loopback is warned about at start.
func TestWrongTokensCountedAndLogged(t *testing.T) {
	core, logs := observer.New(zap.WarnLevel)
	r := newRig(t, thalex.Name, func(c *sidecar.Config) { c.Token = "s3cret"; c.Logger = zap.New(core) })
	for range 20 {
		code, body := httpGet(t, r.url+"/v1/status?token=wrong")
		require.Equal(t, http.StatusUnauthorized, code)
		require.Contains(t, body, "'Authorization: Bearer TOKEN', or as ?token=TOKEN", "says how to send one")
	}
	assert.Equal(t, 1, logs.FilterMessageSnippet("wrong token").Len(), "logged once for the address")
	_, metrics := httpGet(t, r.url+"/metrics?token=s3cret")
	assert.Contains(t, metrics, "wsfan_sidecar_token_refusals_total 20")

	core, logs = observer.New(zap.WarnLevel)
	srv, err := sidecar.New(sidecar.Config{Upstream: "ws://127.0.0.1:1/ws", Protocol: thalex.Name, Listen: "0.0.0.0:0", Token: "abc", Logger: zap.New(core)})
	require.NoError(t, err)
	srv.Close()
	assert.Equal(t, 1, logs.FilterMessageSnippet("token is short").Len())
}

// A topic name past the cap is refused without a word upstream.
func TestLongTopicRefused(t *testing.T) {
	r := newRig(t, thalex.Name, nil)
	ws := r.dial(t)
	long := strings.Repeat("x", 200<<10)
	testutil.Send(t, ws, `{"jsonrpc":"2.0","id":1,"method":"public/subscribe","params":{"channels":["`+long+`","ticker.BTC-PERPETUAL.raw"]}}`)
	ack := testutil.RecvJSON(t, ws)
	assert.Equal(t, []any{"ticker.BTC-PERPETUAL.raw"}, ack["result"])
	assert.Zero(t, r.up.CountSubscribes(long))
	assert.Equal(t, 1, r.up.CountSubscribes("ticker.BTC-PERPETUAL.raw"))
}

// A local program cannot act on the session the others share: Deribit's
// private/logout and cancel-on-disconnect, Thalex's as well, are answered
// by the sidecar as blocked and never reach the upstream; a spelling of
// another venue is refused naming the venue's own.
func TestSessionMethodsStayLocal(t *testing.T) {
	for _, tc := range []struct {
		dialect exchangetest.Dialect
		methods []string
	}{
		{deribit.Name, []string{"private/logout", "private/enable_cancel_on_disconnect", "public/auth"}},
		{thalex.Name, []string{"private/set_cancel_on_disconnect", "public/login", "public/unsubscribe", "private/unsubscribe"}},
	} {
		r := newRig(t, tc.dialect, nil)
		ws := r.dial(t)
		for i, method := range tc.methods {
			testutil.Send(t, ws, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":{}}`, i+1, method))
			resp := testutil.RecvJSON(t, ws)
			errObj, _ := resp["error"].(map[string]any)
			require.NotNil(t, errObj, "%s: %v", method, resp)
			if strings.HasSuffix(method, "/unsubscribe") && tc.dialect == thalex.Name {
				// Not a Thalex method at all: the refusal names Thalex's own.
				assert.Contains(t, errObj["message"], `is not a thalex method: its name is "unsubscribe"`, method)
			} else {
				assert.Contains(t, errObj["message"], "is not forwarded", method)
			}
			assert.Zero(t, r.up.CountReceived(method), "%s reached the upstream", method)
		}
		assert.True(t, r.sc.Ready(), "the shared upstream is still up")
	}
}

// A full topic table lets go of topics nobody holds any more (in their
// grace period) to make room: churn never leaves a bystander refused.
func TestFullTableEvictsGraceTopics(t *testing.T) {
	r := newRig(t, thalex.Name, func(c *sidecar.Config) { c.MaxTopics = 2; c.Grace = time10s })
	ctx := testutil.Context(t)
	churn := r.dial(t)
	testutil.Send(t, churn, `{"jsonrpc":"2.0","id":1,"method":"public/subscribe","params":{"channels":["a.1","a.2"]}}`)
	require.Len(t, testutil.RecvJSON(t, churn)["result"], 2)
	require.NoError(t, churn.Close())
	waitFor(t, "both topics in their grace period", func() bool {
		st := r.sc.Status()
		return len(st.Topics) == 2 && st.Topics[0].Refs == 0 && st.Topics[1].Refs == 0
	})

	bystander := r.dial(t)
	testutil.Send(t, bystander, `{"jsonrpc":"2.0","id":1,"method":"public/subscribe","params":{"channels":["b.1"]}}`)
	assert.Equal(t, []any{"b.1"}, testutil.RecvJSON(t, bystander)["result"], "the bystander is served")
	require.NoError(t, r.up.WaitReceived(ctx, "unsubscribe", 1), "a grace topic was let go upstream")
	assert.LessOrEqual(t, len(r.sc.Status().Topics), 2)
}

// A subscribe of an unknown topic is answered with an error saying why,
// naming the topic and the offered ones, in the dialect's shape. One
// made while the upstream is down is answered at once, accepted, and
// subscribed upstream once it is back.
func TestRefusedSubscribeExplainsItself(t *testing.T) {
	r := newRig(t, thalex.Name, func(c *sidecar.Config) {
		c.Topics = []string{"a.b"}
		c.RequestTimeout = 5 * time.Second
	})
	ws := r.dial(t)
	testutil.Send(t, ws, `{"jsonrpc":"2.0","id":1,"method":"public/subscribe","params":{"channels":["a.c"]}}`)
	resp := testutil.RecvJSON(t, ws)
	errObj, _ := resp["error"].(map[string]any)
	require.NotNil(t, errObj, "%v", resp)
	assert.Contains(t, errObj["message"], `"a.c"`)
	assert.Contains(t, errObj["message"], `offers "a.b"`)

	r.up.Stop()
	waitFor(t, "the upstream down", func() bool { return !r.sc.Ready() })
	start := time.Now()
	testutil.Send(t, ws, `{"jsonrpc":"2.0","id":2,"method":"public/subscribe","params":{"channels":["a.b"]}}`)
	resp = testutil.RecvJSON(t, ws)
	assert.Equal(t, []any{"a.b"}, resp["result"], "%v", resp)
	assert.Less(t, time.Since(start), 2*time.Second, "answered without waiting for the upstream")

	require.NoError(t, r.up.Start())
	ctx := testutil.Context(t)
	require.NoError(t, r.up.WaitSubscribers(ctx, "a.b", 1))
	r.up.Publish("a.b", []byte(`{"n":1}`))
	m := testutil.RecvJSON(t, ws)
	assert.Equal(t, "a.b", m["channel_name"], "%v", m)
}

// An upstream message that is not valid UTF-8 reaches local clients as
// valid UTF-8 text (U+FFFD for each invalid sequence), so no browser
// closes its connection on it, and the messages after it flow; it is
// counted.
func TestInvalidUTF8FromUpstreamIsMended(t *testing.T) {
	r := newRig(t, thalex.Name, nil)
	ws := r.dial(t)
	topic := "ticker.BTC-PERPETUAL.raw"
	testutil.Send(t, ws, `{"id":1,"method":"public/subscribe","params":{"channels":["`+topic+`"]}}`)
	testutil.Recv(t, ws)
	require.NoError(t, r.up.WaitSubscribers(testutil.Context(t), topic, 1))
	r.up.Publish(topic, []byte("{\"name\":\"bad \xff\xfe byte\"}"))
	r.up.Publish(topic, []byte(`{"mark_price":1}`))
	first := testutil.Recv(t, ws)
	assert.True(t, utf8.ValidString(first), "valid UTF-8: %q", first)
	assert.Contains(t, first, "bad \uFFFD byte")
	assert.Contains(t, testutil.Recv(t, ws), `{"mark_price":1}`, "the next message flows")
	code, metrics := httpGet(t, r.url+"/metrics")
	require.EqualValues(t, http.StatusOK, code)
	assert.Contains(t, metrics, "wsfan_sidecar_upstream_invalid_utf8_total 1")
}

// A subscribe the upstream is slow to answer holds up nothing else of the
// client's: its pings are answered, and a request the sidecar answers
// itself comes back, while the subscribe waits; the subscribe's answer
// follows when the upstream's comes.
func TestSlowSubscribeHoldsUpNothingElse(t *testing.T) {
	r := newRig(t, deribit.Name, nil)
	ws := r.dial(t)
	r.up.SetResponseDelay(2 * time.Second)
	start := time.Now()
	testutil.Send(t, ws, `{"jsonrpc":"2.0","id":1,"method":"public/subscribe","params":{"channels":["ticker.BTC-PERPETUAL.100ms"]}}`)
	testutil.Send(t, ws, `{"jsonrpc":"2.0","id":2,"method":"private/logout"}`) // a session method: answered by the sidecar
	pong := make(chan struct{}, 1)
	ws.SetPongHandler(func(string) error { pong <- struct{}{}; return nil })
	require.NoError(t, ws.WriteControl(websocket.PingMessage, []byte("p"), time.Now().Add(time.Second)))

	frames := make(chan string, 4)
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
	select {
	case <-pong:
	case <-time.After(time.Second):
		t.Fatal("no pong while the subscribe waits")
	}
	assert.Contains(t, <-frames, `"id":2`, "the sidecar's own answer does not wait for the subscribe")
	assert.Less(t, time.Since(start), 2*time.Second, "answered before the upstream answered the subscribe")
	assert.Contains(t, <-frames, `"id":1,"result":["ticker.BTC-PERPETUAL.100ms"]`)
}

// The topics one local request asks for are subscribed upstream in one
// request (as few as the exchange's limits allow), not one a topic: 25
// programs subscribing 20 channels each make 25 upstream requests, not
// 500, which Deribit's subscription limit (10 at once, then about 3 a
// second) would spread over minutes.
func TestOneLocalRequestOneUpstreamRequest(t *testing.T) {
	r := newRig(t, deribit.Name, nil)
	channels := make([]string, 20)
	for i := range channels {
		channels[i] = fmt.Sprintf("ticker.C%d-PERPETUAL.100ms", i)
	}
	list, _ := json.Marshal(channels)
	ws := r.dial(t)
	testutil.Send(t, ws, `{"jsonrpc":"2.0","id":1,"method":"public/subscribe","params":{"channels":`+string(list)+`}}`)
	var ack struct{ Result []string }
	require.NoError(t, json.Unmarshal([]byte(testutil.Recv(t, ws)), &ack))
	assert.ElementsMatch(t, channels, ack.Result)
	assert.Equal(t, 1, r.up.CountReceived("public/subscribe"), "one upstream request for the 20 channels")
}

// An upstream frame the sidecar's client drops for its size is not lost
// silently: an SSE client gets the gap mark before the topic's next
// message.
func TestOversizedUpstreamFrameMarksAGap(t *testing.T) {
	r := newRig(t, deribit.Name, func(c *sidecar.Config) {
		c.UpstreamOptions = append(c.UpstreamOptions, client.WithReadLimit(1024))
	})
	topic := "ticker.BTC-PERPETUAL.100ms"
	st := openSSE(t, r.url+"/v1/stream?topic="+topic, "")
	st.next(t)             // the stream's opening comment,
	r.waitClients(t, 1, 1) // written before the stream is attached
	require.NoError(t, r.up.WaitSubscribers(testutil.Context(t), topic, 1))
	r.up.Publish(topic, []byte(`{"pad":"`+strings.Repeat("x", 4096)+`"}`))
	r.up.Publish(topic, []byte(`{"n":2}`))
	assert.Equal(t, `{"topic":"`+topic+`","gap":true}`, st.next(t).data)
	assert.Contains(t, st.next(t).data, `{"n":2}`)
}

// A refusal's JSON body reads as written: no \u0026 for '&'.
func TestRefusalBodyIsPlainJSON(t *testing.T) {
	r := newRig(t, thalex.Name, nil)
	code, body := httpGet(t, r.url+"/v1/stream")
	assert.Equal(t, http.StatusBadRequest, code)
	assert.Contains(t, body, "/v1/stream?topic=NAME[&topic=NAME...]")
	assert.NotContains(t, body, `\u0026`)
}

// A stream request that names no topic the way the sidecar reads them
// is told what is wrong with it, not only to name a topic.
func TestStreamQueryMistakesAreNamed(t *testing.T) {
	r := newRig(t, thalex.Name, nil)
	for query, want := range map[string]string{
		"topics=a.b":         `name each topic with its own topic=`,
		"topic=a%ZZ":         `malformed query: invalid URL escape`,
		"topic=a.b&topic=%z": `escape a topic's % as %25`,
	} {
		code, body := httpGet(t, r.url+"/v1/stream?"+query)
		assert.Equal(t, http.StatusBadRequest, code, query)
		assert.Contains(t, body, want, query)
	}
}

// A subscribe naming a known and an unknown topic is answered as the
// exchange answers it: the channels subscribed, the unknown one left out
// of the list (Deribit answers an unknown channel with an empty list);
// the sidecar logs the refusal and lists it in the status.
func TestMixedSubscribeAnswersTheKnownTopics(t *testing.T) {
	core, logs := observer.New(zap.WarnLevel)
	r := newRig(t, thalex.Name, func(c *sidecar.Config) {
		c.Topics = []string{"a.b"}
		c.Logger = zap.New(core)
	})
	ws := r.dial(t)
	testutil.Send(t, ws, `{"jsonrpc":"2.0","id":1,"method":"public/subscribe","params":{"channels":["a.b","x.y"]}}`)
	resp := testutil.RecvJSON(t, ws)
	assert.Equal(t, []any{"a.b"}, resp["result"], "%v", resp)
	assert.Nil(t, resp["error"])
	require.Eventually(t, func() bool { return logs.FilterMessage("subscribe refused").Len() == 1 }, 5*time.Second, 5*time.Millisecond)
	refusals := r.sc.Status().Refusals
	require.NotEmpty(t, refusals)
	assert.Equal(t, []string{"x.y"}, refusals[0].Topics)
}
