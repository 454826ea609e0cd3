package sidecar_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/sidecar"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// Readiness and the status tell the truth about the data, not only the
// connection: a topic silent while another flows is marked stale in the
// status (and resubscribed), every topic silent at once makes /readyz
// 503 with the reason though the upstream still answers pings, and each
// topic shows when its last message came.
func TestReadinessFollowsTheData(t *testing.T) {
	r := newRig(t, thalex.Name, func(c *sidecar.Config) {
		c.UpstreamOptions = []client.Option{client.WithStaleAfter(10, 300*time.Millisecond)}
	})
	ctx := testutil.Context(t)
	quiet, busy := "ticker.A.raw", "ticker.B.raw"
	ws := r.dial(t)
	testutil.Send(t, ws, `{"jsonrpc":"2.0","id":1,"method":"public/subscribe","params":{"channels":["`+quiet+`","`+busy+`"]}}`)
	testutil.RecvJSON(t, ws)
	r.waitClients(t, 1, 2)
	require.NoError(t, r.up.WaitSubscribers(ctx, busy, 1))
	go func() { // the client reads what it is sent
		for {
			if _, _, err := ws.ReadMessage(); err != nil {
				return
			}
		}
	}()
	for range 40 { // the rhythm records one every 15ms: 17 needed
		r.up.Publish(quiet, []byte(`{"n":1}`))
		r.up.Publish(busy, []byte(`{"n":1}`))
		time.Sleep(10 * time.Millisecond)
	}

	// Only busy flows: quiet is found stale.
	flow, stop := context.WithCancel(ctx)
	go func() {
		for flow.Err() == nil {
			r.up.Publish(busy, []byte(`{"n":2}`))
			time.Sleep(10 * time.Millisecond)
		}
	}()
	waitFor(t, "the quiet topic stale", func() bool { return topicStatus(r.sc.Status(), quiet).Stale })
	assert.True(t, r.sc.Ready(), "one topic flows")
	st := topicStatus(r.sc.Status(), quiet)
	require.NotNil(t, st.LastMessage)
	assert.Greater(t, st.AgeSeconds, 0.3)
	assert.False(t, topicStatus(r.sc.Status(), busy).Stale)
	stop()

	// Nothing flows: not ready, though the upstream is connected.
	waitFor(t, "not ready", func() bool { return !r.sc.Ready() })
	code, body := httpGet(t, r.url+"/readyz")
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Contains(t, body, "silent")
	assert.Equal(t, "connected", r.sc.Status().Upstream.State)
	assert.Greater(t, r.sc.Status().Upstream.LagSeconds, 0.0, "the upstream's ping round trip")

	r.up.Publish(busy, []byte(`{"n":3}`))
	waitFor(t, "ready again", r.sc.Ready)
}

// topicStatus is topic's entry in st, or the zero value.
func topicStatus(st sidecar.Status, topic string) sidecar.TopicStatus {
	for _, ts := range st.Topics {
		if ts.Topic == topic {
			return ts
		}
	}
	return sidecar.TopicStatus{}
}

// An SSE stream opened while the upstream is down gets its headers at
// once, not after the upstream is back; its topic is subscribed when it
// is, and its first message is marked "reconnected": it was asked for
// while the upstream was out of reach.
func TestSSEWhileUpstreamDown(t *testing.T) {
	r := newRig(t, thalex.Name, nil)
	r.up.Stop()
	waitFor(t, "the upstream down", func() bool { return !r.sc.Ready() })

	start := time.Now()
	st := openSSE(t, r.url+"/v1/stream?topic=ticker.DOWN.raw", "")
	assert.Less(t, time.Since(start), 2*time.Second, "headers without waiting for the upstream")
	assert.Contains(t, st.next(t).comment, "streaming ticker.DOWN.raw")

	require.NoError(t, r.up.Start())
	ctx := testutil.Context(t)
	require.NoError(t, r.up.WaitSubscribers(ctx, "ticker.DOWN.raw", 1))
	r.up.Publish("ticker.DOWN.raw", []byte(`{"n":1}`))
	ev := st.next(t)
	assert.JSONEq(t, `{"topic":"ticker.DOWN.raw","data":{"n":1},"reconnected":true}`, ev.data)
}
