package sidecar

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// subscribeNames subscribes s to names as both transports do.
func subscribeNames(ctx context.Context, s *session, names []string) (accepted []string, fresh []*topic, err error) {
	reserved, invalid, refusal := s.hub.reserve(s, names)
	accepted, fresh, _, err = s.await(ctx, names, reserved, invalid, refusal)
	return accepted, fresh, err
}

// reserve and await accept what they can, in request order and once each, and
// says why it refused the rest; attach queues the acknowledgement before
// the topics' frames; unsubscribe leaves what was held. Both transports
// go through these.
func TestSessionSubscribe(t *testing.T) {
	var st stats
	exch, u, stop := newTestUpstream(t, &st)
	cfg := testConfig(t, nil)
	h := newTestHub(t, cfg, &st, u.feed, stop)
	ctx := testutil.Context(t)
	s, _ := newTestSession(cfg, &st, h, kindWS)

	accepted, fresh, err := subscribeNames(ctx, s, []string{"b.b", "bad name", "a.a", "b.b"})
	require.ErrorIs(t, err, protocol.ErrInvalidTopic)
	assert.Equal(t, []string{"b.b", "a.a"}, accepted)
	require.Len(t, fresh, 2)
	s.attach([]byte("ack"), fresh)
	assert.Len(t, s.topics, 2)
	assert.Equal(t, int32(2), s.ntopics.Load())
	exch.Publish("a.a", []byte(`1`))
	require.Eventually(t, func() bool { n, _ := s.queued(); return n == 2 }, 5*time.Second, time.Millisecond)
	assert.Equal(t, [][]byte{[]byte("ack"), textFrame([]byte(`{"channel_name":"a.a","notification":1}`))},
		takeAll(t, s))

	accepted, fresh, err = subscribeNames(ctx, s, []string{"a.a"})
	require.NoError(t, err)
	assert.Equal(t, []string{"a.a"}, accepted, "a held topic is accepted again")
	assert.Empty(t, fresh)

	assert.Equal(t, []string{"a.a"}, s.unsubscribe([]string{"a.a", "c.c"}))
	assert.Equal(t, 0, refs(h, "a.a"))
	assert.Equal(t, 1, refs(h, "b.b"))
	s.unsubscribeAll()
	assert.Empty(t, s.topics)
	assert.Equal(t, 0, refs(h, "b.b"))
	assert.Equal(t, int32(0), s.ntopics.Load())
}

// A client going over Config.MaxTopicsPerClient is closed with the reason
// before anything is reserved.
func TestSessionSubscribeLimit(t *testing.T) {
	var st stats
	_, u, stop := newTestUpstream(t, &st)
	cfg := testConfig(t, func(c *Config) { c.MaxTopicsPerClient = 2 })
	h := newTestHub(t, cfg, &st, u.feed, stop)
	s, _ := newTestSession(cfg, &st, h, kindWS)

	accepted, fresh, err := subscribeNames(testutil.Context(t), s, []string{"a.a", "b.b", "c.c"})
	require.ErrorIs(t, err, errTooManyTopics)
	assert.Empty(t, accepted)
	assert.Empty(t, fresh)
	reason, closing := s.closeState()
	require.True(t, closing)
	assert.Equal(t, reasonTooManyTopics(2), reason)
	assert.Empty(t, h.list(), "nothing was reserved, so nothing was opened upstream")
}
