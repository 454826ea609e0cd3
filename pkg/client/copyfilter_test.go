package client_test

import (
	"bytes"
	"fmt"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/client"
)

// A frame the copy filter drops reaches no subscription, and the topic's
// record moves past it: the next change, which follows the dropped one,
// is no gap. The dropped frame's bytes are read over by the next frame:
// a copy costs no room in the read slab.
func TestCopyFilterDropsAndMovesTheTopicOn(t *testing.T) {
	tc := gapCases[0] // Deribit's book
	srv := newServer(t, tc.server)
	dropped := make(chan []byte, 1)
	var mu sync.Mutex
	at := map[string]*byte{} // where the frame of a change was read
	filter := func(frame []byte, _ time.Time) (client.Copy, bool) {
		for _, change := range []string{"101", "102"} {
			if bytes.Contains(frame, []byte(`"change_id":`+change)) {
				mu.Lock()
				at[change] = unsafe.SliceData(frame)
				mu.Unlock()
			}
		}
		if !bytes.Contains(frame, []byte(`"change_id":101`)) {
			return client.Copy{}, false
		}
		dropped <- bytes.Clone(frame)
		return client.Copy{Topic: tc.book, Place: 101, Placed: true}, true
	}
	c := dial(t, srv, tc.proto(), fastBackoff(), client.WithCopyFilter(filter))
	ctx := testutil.Context(t)
	book, err := c.Subscribe(ctx, []string{tc.book})
	require.NoError(t, err)
	require.NoError(t, srv.WaitSubscribers(ctx, tc.book, 1))
	drainEvents(c)

	srv.Publish(tc.book, tc.update(100, 0))
	srv.Publish(tc.book, tc.update(101, 100)) // dropped: another connection delivered it
	srv.Publish(tc.book, tc.update(102, 101))
	m := receive(t, book)
	assert.Contains(t, string(m.Data), `"change_id":100`)
	m = receive(t, book)
	assert.Contains(t, string(m.Data), `"change_id":102`, "the dropped change reached no subscription")
	assert.False(t, m.Gap(), "the topic's record moved past the dropped change")
	assert.Contains(t, string(<-dropped), `"change_id":101`)
	requireNoEvent(t, c, client.Gap, 0)
	mu.Lock()
	defer mu.Unlock()
	assert.Same(t, at["101"], at["102"], "the change after the dropped copy was read where the copy was")
}

// A copy dropped after the topic was left and subscribed again moves the
// new subscription's record on, not the one left: the reader keeps the
// topic of the last copy to spare a lock a copy, and must not keep one
// that was left. With the left one kept, the change after the dropped
// one would follow a change the topic never saw: a false gap.
func TestCopyFilterMovesTheTopicSubscribedAgain(t *testing.T) {
	tc := gapCases[0] // Deribit's book
	srv := newServer(t, tc.server)
	filter := func(frame []byte, _ time.Time) (client.Copy, bool) { // drops 101 and 201
		for _, id := range []uint64{101, 201} {
			if bytes.Contains(frame, fmt.Appendf(nil, `"change_id":%d,`, id)) {
				return client.Copy{Topic: tc.book, Place: id, Placed: true}, true
			}
		}
		return client.Copy{}, false
	}
	c := dial(t, srv, tc.proto(), fastBackoff(), client.WithCopyFilter(filter))
	ctx := testutil.Context(t)
	book, err := c.Subscribe(ctx, []string{tc.book})
	require.NoError(t, err)
	require.NoError(t, srv.WaitSubscribers(ctx, tc.book, 1))
	srv.Publish(tc.book, tc.update(100, 0))
	srv.Publish(tc.book, tc.update(101, 100)) // dropped: the reader keeps the topic
	srv.Publish(tc.book, tc.update(102, 101))
	assert.Contains(t, string(receive(t, book).Data), `"change_id":100`)
	assert.Contains(t, string(receive(t, book).Data), `"change_id":102`)
	require.NoError(t, book.Unsubscribe(ctx))
	require.NoError(t, srv.WaitSubscribers(ctx, tc.book, 0))

	again, err := c.Subscribe(ctx, []string{tc.book})
	require.NoError(t, err)
	require.NoError(t, srv.WaitSubscribers(ctx, tc.book, 1))
	drainEvents(c)
	srv.Publish(tc.book, tc.update(200, 0))
	srv.Publish(tc.book, tc.update(201, 200)) // dropped: the new subscription's record moves on
	srv.Publish(tc.book, tc.update(202, 201))
	assert.Contains(t, string(receive(t, again).Data), `"change_id":200`)
	m := receive(t, again)
	assert.Contains(t, string(m.Data), `"change_id":202`)
	assert.False(t, m.Gap(), "the copy dropped moved the topic subscribed again on")
	requireNoEvent(t, c, client.Gap, 0)
}
