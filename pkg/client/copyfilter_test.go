package client_test

import (
	"bytes"
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
