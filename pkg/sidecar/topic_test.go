package sidecar

import (
	"fmt"
	"runtime"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// attachTo attaches sessions to t as session.attach does.
func attachTo(t *topic, sessions ...*session) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, s := range sessions {
		t.attachLocked(s)
	}
}

// takeAll returns what a session has queued, as its writer would.
func takeAll(t *testing.T, s *session) [][]byte {
	t.Helper()
	batch, closing := s.take(nil, true)
	require.False(t, closing)
	out := slices.Clone(batch)
	s.wrote(batch)
	return out
}

// A message is encoded once per format: every WebSocket subscriber gets
// the very same bytes, a complete frame in the dialect's notification,
// and every SSE subscriber the same event.
func TestTopicPublishEncodesOnce(t *testing.T) {
	var st stats
	cfg := testConfig(t, nil)
	tp := newTopic("ticker.BTC-PERPETUAL.raw", nil, testTopicConfig(thalexWire, &st))
	ws1, _ := newTestSession(cfg, &st, nil, kindWS)
	ws2, _ := newTestSession(cfg, &st, nil, kindWS)
	sse, _ := newTestSession(cfg, &st, nil, kindSSE)
	attachTo(tp, ws1, ws2, sse)

	tp.publish(client.Message{Data: []byte(`{"p":1}`)}, false)

	f1, f2, ev := takeAll(t, ws1), takeAll(t, ws2), takeAll(t, sse)
	require.Len(t, f1, 1)
	require.Len(t, f2, 1)
	require.Len(t, ev, 1)
	assert.Same(t, &f1[0][0], &f2[0][0], "one frame shared by every WebSocket subscriber")
	assert.Equal(t, textFrame([]byte(`{"channel_name":"ticker.BTC-PERPETUAL.raw","notification":{"p":1}}`)), f1[0])
	assert.Equal(t, "id: test-1\ndata: {\"topic\":\"ticker.BTC-PERPETUAL.raw\",\"data\":{\"p\":1}}\n\n", string(ev[0]))
	assert.Equal(t, uint64(1), tp.received.Load())
	assert.Equal(t, uint64(3), tp.delivered.Load())
}

// The first message after an upstream reconnect is counted as a resume;
// SSE subscribers see it marked reconnected, or, with named events, a
// wsfan.reconnected event before it.
func TestTopicResume(t *testing.T) {
	var st stats
	tp := newTopic("a.b", nil, testTopicConfig(deribitWire, &st))
	sse, _ := newTestSession(testConfig(t, nil), &st, nil, kindSSE)
	named, _ := newTestSession(testConfig(t, nil), &st, nil, kindSSE)
	named.enc = sseNamed
	attachTo(tp, sse, named)

	tp.publish(client.Message{Data: []byte(`1`), Flags: client.FlagReconnected}, false)

	assert.Equal(t, "id: test-1\ndata: {\"topic\":\"a.b\",\"reconnected\":true,\"data\":1}\n\n", string(takeAll(t, sse)[0]))
	assert.Equal(t, "event: wsfan.reconnected\ndata: {\"topic\":\"a.b\"}\n\n"+"id: test-1\nevent: a.b\ndata: 1\n\n",
		string(takeAll(t, named)[0]))
	assert.Equal(t, uint64(1), tp.resumes.Load())
	assert.Equal(t, uint64(1), st.resumes.Load())
	assert.NotZero(t, st.lastResume.Load())
}

// With the cache on, a late joiner gets the last message first; without
// it, nothing until the next one.
func TestTopicLastMessageCache(t *testing.T) {
	for _, cache := range []bool{false, true} {
		var st stats
		cfg := testConfig(t, nil)
		tc := testTopicConfig(thalexWire, &st)
		tc.cache = cache
		tp := newTopic("a.b", nil, tc)
		tp.publish(client.Message{Data: []byte(`1`)}, false)
		tp.publish(client.Message{Data: []byte(`2`)}, false)
		late, _ := newTestSession(cfg, &st, nil, kindWS)
		attachTo(tp, late)
		got := takeAll(t, late)
		if !cache {
			assert.Empty(t, got)
			continue
		}
		assert.Equal(t, [][]byte{textFrame([]byte(`{"channel_name":"a.b","notification":2}`))}, got)
	}
}

// A detached session gets nothing more; detach reports whether it was
// attached.
func TestTopicDetach(t *testing.T) {
	var st stats
	cfg := testConfig(t, nil)
	tp := newTopic("a.b", nil, testTopicConfig(thalexWire, &st))
	a, _ := newTestSession(cfg, &st, nil, kindWS)
	b, _ := newTestSession(cfg, &st, nil, kindSSE)
	attachTo(tp, a, b)
	assert.True(t, tp.detach(b))
	assert.False(t, tp.detach(b))
	assert.Zero(t, tp.users[sseMessages.id])

	tp.publish(client.Message{Data: []byte(`1`)}, false)
	assert.Len(t, takeAll(t, a), 1)
	assert.Empty(t, takeAll(t, b))
	assert.Equal(t, []*session{a}, tp.subscribers())
}

// The server halves of the dialects the unit tests speak locally.
var (
	thalexWire, _  = protocol.ServerByName("thalex")
	deribitWire, _ = protocol.ServerByName("deribit")
)

// A topic with more subscribers than parallelOffers splits a message's
// offers over the processors: every subscriber, WebSocket and SSE, gets
// every message once and in order, and the counts add up.
func TestTopicParallelOffersKeepOrder(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("one processor: offers are never split")
	}
	var st stats
	cfg := testConfig(t, nil)
	tp := newTopic("ticker.BTC-PERPETUAL.raw", nil, testTopicConfig(thalexWire, &st))
	subs := make([]*session, parallelOffers+101)
	for i := range subs {
		kind := kindWS
		if i%3 == 0 {
			kind = kindSSE
		}
		subs[i], _ = newTestSession(cfg, &st, nil, kind)
	}
	attachTo(tp, subs...)
	const msgs = 5
	for i := range msgs {
		tp.publish(client.Message{Data: fmt.Appendf(nil, `{"n":%d}`, i)}, false)
	}
	for _, s := range subs {
		frames := takeAll(t, s)
		require.Len(t, frames, msgs)
		for i, f := range frames {
			assert.Contains(t, string(f), fmt.Sprintf(`{"n":%d}`, i), "in order")
		}
	}
	assert.Equal(t, uint64(msgs*len(subs)), tp.delivered.Load())
}
