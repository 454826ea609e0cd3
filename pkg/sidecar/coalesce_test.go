package sidecar_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/sidecar"
)

// Twenty programs subscribing at once, each to a topic of its own, while
// the upstream is slow to answer: the first request goes up alone, the
// ones that come within a few milliseconds share the next round, so the
// upstream reads a few subscribe requests, not twenty, and every program
// gets its topic.
func TestConcurrentSubscribesShareARound(t *testing.T) {
	const programs = 20
	dc := dialects[0] // Thalex: no subscribe pace of its own to hide the rounds
	r := newRig(t, dc.d, nil)
	r.up.SetResponseDelay(300 * time.Millisecond)
	conns := make([]*websocket.Conn, programs)
	for i := range conns {
		conns[i] = r.dial(t)
	}
	topic := func(i int) string { return fmt.Sprintf("ticker.T%d-PERPETUAL.raw", i) }

	var wg sync.WaitGroup
	acks := make([]map[string]any, programs)
	for i, ws := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = ws.WriteMessage(websocket.TextMessage, []byte(dc.subscribe(i+1, topic(i))))
			_ = ws.ReadJSON(&acks[i])
		}()
	}
	wg.Wait()
	for i, ack := range acks {
		require.EqualValues(t, i+1, ack["id"], "program %d's answer", i)
		assert.Equal(t, fmt.Sprint([]any{topic(i)}), fmt.Sprint(ack["result"]), "program %d subscribed", i)
	}
	rounds := r.up.CountReceived(dc.subMethod)
	assert.LessOrEqual(t, rounds, programs/2, "subscribe requests upstream for %d programs", programs)
	for i := range programs {
		require.EqualValues(t, 1, r.up.CountSubscribes(topic(i)))
	}
	r.up.SetResponseDelay(0)
	r.up.Publish(topic(7), []byte(`{"n":1}`))
	require.JSONEq(t, dc.frame(topic(7), "", `{"n":1}`), testutil.Recv(t, conns[7]))
}

// A round the upstream is slow to answer holds up no later subscribe: a
// program that comes after the gathering window has its own round at
// once, answered within the request timeout although the first round
// takes most of it.
func TestSlowRoundHoldsUpNoOther(t *testing.T) {
	dc := dialects[0]
	r := newRig(t, dc.d, func(c *sidecar.Config) { c.RequestTimeout = 1500 * time.Millisecond })
	r.up.SetResponseDelay(time.Second)
	a, b := r.dial(t), r.dial(t)
	testutil.Send(t, a, dc.subscribe(1, "ticker.A-PERPETUAL.raw"))
	time.Sleep(200 * time.Millisecond) // a's round is under way
	testutil.Send(t, b, dc.subscribe(2, "ticker.B-PERPETUAL.raw"))
	for _, ws := range []*websocket.Conn{a, b} {
		ack := testutil.RecvJSON(t, ws)
		require.NotContains(t, ack, "error", "answered in time: %v", ack)
	}
}

// Programs holding 100 Deribit channels each leave together: the topics'
// grace runs out at once and they leave the upstream in a few unsubscribe
// requests, as they were subscribed, not one a channel (300 requests at
// Deribit's subscription budget would end the session).
func TestLeavingTopicsShareAnUnsubscribeRound(t *testing.T) {
	const programs, channels = 3, 100
	dc := dialects[1]
	require.Equal(t, "deribit", dc.name)
	r := newRig(t, dc.d, nil)
	conns := make([]*websocket.Conn, programs)
	for p := range conns {
		conns[p] = r.dial(t)
		names := make([]string, channels)
		for i := range names {
			names[i] = fmt.Sprintf("%q", fmt.Sprintf("ticker.P%dI%d.100ms", p, i))
		}
		testutil.Send(t, conns[p], fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"public/subscribe","params":{"channels":[%s]}}`,
			strings.Join(names, ",")))
		ack := testutil.RecvJSON(t, conns[p])
		require.Len(t, ack["result"], channels, "%v", ack)
	}
	subscribes := r.up.CountReceived(dc.subMethod)
	for _, ws := range conns {
		require.NoError(t, ws.Close())
	}
	ctx := testutil.Context(t)
	for p := range programs {
		for i := range channels {
			require.NoError(t, r.up.WaitSubscribers(ctx, fmt.Sprintf("ticker.P%dI%d.100ms", p, i), 0))
		}
	}
	unsubscribes := r.up.CountReceived(dc.unsMethod)
	assert.LessOrEqual(t, unsubscribes, subscribes, "%d subscribe and %d unsubscribe requests for %d channels",
		subscribes, unsubscribes, programs*channels)
}
