package client_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/client"
)

// A frame the copy filter drops reaches no subscription, and the topic's
// record moves past it: the next change, which follows the dropped one,
// is no gap.
func TestCopyFilterDropsAndMovesTheTopicOn(t *testing.T) {
	tc := gapCases[0] // Deribit's book
	srv := newServer(t, tc.server)
	dropped := make(chan []byte, 1)
	filter := func(frame []byte, _ time.Time) (client.Copy, bool) {
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
}
