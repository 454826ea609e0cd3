package sidecar

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// The tests in package sidecar build one part (session, topic, hub) from
// the values it needs, with nothing else running.

// testConfig returns a validated Config with tune applied.
func testConfig(t testing.TB, tune func(*Config)) *Config {
	t.Helper()
	cfg := Config{Upstream: "ws://127.0.0.1:1/unused", Protocol: thalex.Name}
	if tune != nil {
		tune(&cfg)
	}
	cfg, _, err := cfg.withDefaults()
	require.NoError(t, err)
	return &cfg
}

// testTransport is a transport whose writer is the test itself: it counts
// what the session asks of it. The session calls it with its mu held, and
// the test reads it on the same goroutine.
type testTransport struct {
	k                   sessionKind
	wakes, aborts, cuts int
	room                int    // bytes tryWrite takes; -1 for all
	wrote               []byte // what tryWrite took
}

func (tr *testTransport) kind() sessionKind         { return tr.k }
func (tr *testTransport) wake()                     { tr.wakes++ }
func (tr *testTransport) abort()                    { tr.aborts++ }
func (tr *testTransport) waitCalls(context.Context) {}
func (tr *testTransport) cut()                      { tr.cuts++ }

func (tr *testTransport) tryWrite(f []byte) int {
	n := len(f)
	if tr.room >= 0 {
		n = min(n, tr.room)
		tr.room -= n
	}
	tr.wrote = append(tr.wrote, f[:n]...)
	return n
}

// testTopicConfig is what a Server gives its topics, with its own
// message count and the default history limits.
func testTopicConfig(wire protocol.Server, st *stats) topicConfig {
	return topicConfig{wire: wire, stats: st, seq: new(atomic.Uint64), stream: "test",
		history: historyLimit{messages: 1000, bytes: 1 << 20}}
}

// disconnects returns the count of sessions closed for label.
func disconnects(st *stats, label string) uint64 {
	return st.disconnect[slices.Index(disconnectReasons, label)].Load()
}

// newTestSession returns a session of kind k built from cfg, counting into
// st, taking topics from h (nil when the test subscribes nothing).
func newTestSession(cfg *Config, st *stats, h *hub, k sessionKind) (*session, *testTransport) {
	tr := &testTransport{k: k, room: -1}
	s := newSession("test", cfg, st, h, tr)
	if k == kindSSE {
		s.enc, s.marks = sseMessages, true
	}
	return s, tr
}

// The writer is woken once when frames arrive for an idle writer, not
// once per frame, and again only after take has made it idle.
func TestSessionWakesAnIdleWriterOnce(t *testing.T) {
	var st stats
	s, tr := newTestSession(testConfig(t, nil), &st, nil, kindWS)
	for _, f := range []string{"a", "bb", "ccc"} {
		require.True(t, s.offer([]byte(f), false))
	}
	assert.Equal(t, 1, tr.wakes)
	frames, bytes := s.queued()
	assert.Equal(t, 3, frames)
	assert.Equal(t, 6, bytes)

	batch, closing := s.take(nil, false)
	require.False(t, closing)
	assert.Equal(t, [][]byte{[]byte("a"), []byte("bb"), []byte("ccc")}, batch)
	spare := s.wrote(batch)
	assert.Empty(t, spare)
	batch, closing = s.take(spare, true) // empty: the writer stops
	assert.Empty(t, batch)
	assert.False(t, closing)

	s.reply([]byte("ack"))
	assert.Equal(t, 2, tr.wakes)
	assert.Equal(t, uint64(3), s.written.Load())
	assert.Equal(t, uint64(6), st.writtenBytes.Load())
	_, bytes = s.queued()
	assert.Equal(t, 3, bytes)
}

// With client.DropNewest a full queue drops the frame and counts it; the
// session goes on.
func TestSessionOverflowDrop(t *testing.T) {
	var st stats
	cfg := testConfig(t, func(c *Config) { c.QueueBytes = 10; c.Overflow = client.DropNewest })
	s, tr := newTestSession(cfg, &st, nil, kindWS)
	assert.True(t, s.offer(make([]byte, 8), false))
	assert.False(t, s.offer(make([]byte, 8), false))
	assert.True(t, s.offer(make([]byte, 2), false))
	assert.Equal(t, uint64(2), s.delivered.Load())
	assert.Equal(t, uint64(1), s.dropped.Load())
	assert.Equal(t, uint64(1), st.dropped[dropQueueFull].Load())
	_, closing := s.closeState()
	assert.False(t, closing)
	assert.Zero(t, tr.aborts)
}

// With client.CloseSubscription a full queue closes the session as a slow
// consumer: the queue is thrown away, a write in progress is aborted, and
// every later frame is dropped as closing.
func TestSessionOverflowCloseSubscription(t *testing.T) {
	var st stats
	cfg := testConfig(t, func(c *Config) { c.QueueBytes = 10 })
	s, tr := newTestSession(cfg, &st, nil, kindWS)
	assert.True(t, s.offer(make([]byte, 8), false))
	assert.False(t, s.offer(make([]byte, 8), false))
	assert.False(t, s.offer(make([]byte, 1), false))
	reason, closing := s.closeState()
	require.True(t, closing)
	assert.Equal(t, reasonSlow(10), reason)
	assert.Equal(t, 1, tr.aborts)
	assert.Equal(t, uint64(1), s.delivered.Load())
	assert.Equal(t, uint64(2), s.dropped.Load())
	assert.Equal(t, uint64(2), st.dropped[dropClosing].Load())
	assert.Equal(t, uint64(1), disconnects(&st, "slow_consumer"))

	batch, closing := s.take(nil, false)
	assert.Empty(t, batch, "a discarded queue is not written")
	assert.True(t, closing)
}

// A reply is never dropped: a client that does not read its answers is
// disconnected instead.
func TestSessionReplyOverLimitCloses(t *testing.T) {
	var st stats
	cfg := testConfig(t, func(c *Config) { c.QueueBytes = 10; c.Overflow = client.DropNewest })
	s, _ := newTestSession(cfg, &st, nil, kindWS)
	s.reply(make([]byte, 8))
	s.reply(make([]byte, 8))
	reason, closing := s.closeState()
	require.True(t, closing)
	assert.Equal(t, reasonSlow(10), reason)
}

// A drain writes what is queued before the writer ends the stream.
func TestSessionDrainWritesTheQueueFirst(t *testing.T) {
	var st stats
	s, tr := newTestSession(testConfig(t, nil), &st, nil, kindSSE)
	require.True(t, s.offer([]byte("last"), false))
	s.close(reasonShutdown, false)
	assert.Equal(t, 1, tr.wakes, "the writer was already woken by the frame")
	assert.Zero(t, tr.aborts)
	assert.False(t, s.offer([]byte("late"), false))

	batch, closing := s.take(nil, true)
	assert.Equal(t, [][]byte{[]byte("last")}, batch)
	assert.False(t, closing)
	s.wrote(batch)
	batch, closing = s.take(nil, true)
	assert.Empty(t, batch)
	assert.True(t, closing)
	assert.Equal(t, uint64(1), disconnects(&st, "shutdown"))
}

// resume claims an idle writer for a keep-alive; once a frame has woken
// it, the wake is the writer's.
func TestSessionResume(t *testing.T) {
	var st stats
	s, tr := newTestSession(testConfig(t, nil), &st, nil, kindSSE)
	assert.True(t, s.resume())
	assert.False(t, s.resume())
	s.take(nil, true)
	require.True(t, s.offer([]byte("x"), false))
	assert.Equal(t, 1, tr.wakes)
	assert.False(t, s.resume())
}

// A caught-up publisher writes to an idle session with nothing queued at
// once, with no writer started; anything queued meanwhile, or a busy
// writer, keeps the frames in the queue.
func TestSessionWritesDirectlyWhenIdle(t *testing.T) {
	var st stats
	s, tr := newTestSession(testConfig(t, nil), &st, nil, kindWS)
	require.True(t, s.offer([]byte("one"), true))
	assert.Equal(t, "one", string(tr.wrote))
	assert.Zero(t, tr.wakes, "no writer started")
	frames, bytes := s.queued()
	assert.Zero(t, frames)
	assert.Zero(t, bytes)
	assert.Equal(t, uint64(1), s.written.Load())

	require.True(t, s.offer([]byte("two"), false)) // behind a backlog: queued
	require.True(t, s.offer([]byte("three"), true))
	assert.Equal(t, "one", string(tr.wrote), "a queue is never overtaken")
	assert.Equal(t, 1, tr.wakes)
	batch, closing := s.take(nil, false)
	assert.False(t, closing)
	assert.Equal(t, [][]byte{[]byte("two"), []byte("three")}, batch)
}

// What the socket does not take of a direct write goes to the writer
// first, before frames queued after it, and even when the session closes
// discarding its queue, so the stream stays readable.
func TestSessionDirectWriteRestGoesFirst(t *testing.T) {
	for _, discard := range []bool{false, true} {
		var st stats
		s, tr := newTestSession(testConfig(t, nil), &st, nil, kindWS)
		tr.room = 2
		require.True(t, s.offer([]byte("abcdef"), true))
		assert.Equal(t, "ab", string(tr.wrote))
		assert.Equal(t, 1, tr.wakes, "the writer takes the rest")
		require.True(t, s.offer([]byte("next"), true))
		frames, bytes := s.queued()
		assert.Equal(t, 2, frames, "the rest and the next frame")
		assert.Equal(t, len("cdef")+len("next"), bytes)
		if discard {
			s.close(reasonSlow(1), true)
		}
		batch, _ := s.take(nil, false)
		want := [][]byte{[]byte("cdef"), []byte("next")}
		if discard {
			want = want[:1]
		}
		assert.Equal(t, want, batch, "discard=%v", discard)
	}
}

// The sidecar names a slow client's fate with the SDK's policies: the
// zero value is CloseSubscription, drop-newest is kept, and the two a
// fan-out cannot keep are refused with the reason.
func TestConfigOverflowPolicies(t *testing.T) {
	assert.Equal(t, client.CloseSubscription, testConfig(t, nil).Overflow)
	assert.Equal(t, client.DropNewest, testConfig(t, func(c *Config) { c.Overflow = client.DropNewest }).Overflow)
	for p, why := range map[client.OverflowPolicy]string{client.DropOldest: "answers beside data", client.Block: "stall every other"} {
		cfg := Config{Upstream: "ws://127.0.0.1:1/unused", Protocol: thalex.Name, Overflow: p}
		_, _, err := cfg.withDefaults()
		require.Error(t, err, "%v", p)
		assert.Contains(t, err.Error(), why)
		assert.Contains(t, err.Error(), "close-subscription or drop-newest")
	}
}
