package book_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/book"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/deribit"
	"github.com/wsfan/wsfan/pkg/ethereal"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/okx"
	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// followOn keeps topic's book over a new client of d's exchange srv.
func followOn(t *testing.T, srv *exchangetest.Server, d exchangetest.Dialect, topic string) *book.Follower {
	t.Helper()
	p, err := protocol.ByName(string(d))
	require.NoError(t, err)
	c, err := client.Dial(testutil.Context(t), srv.URL(), client.WithProtocol(p))
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	f, err := book.Follow(testutil.Context(t), c, topic)
	require.NoError(t, err)
	t.Cleanup(func() { _ = f.Close(context.Background()) })
	return f
}

// next waits for f's next event.
func next(t *testing.T, f *book.Follower) book.Event {
	t.Helper()
	select {
	case ev := <-f.Events():
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no book event")
		return book.Event{}
	}
}

// A change lost on the way breaks the chain: the book is invalid at once,
// exactly one resync is asked for, and the fresh snapshot makes the book
// the exchange's again, as a follower that never saw the gap holds it.
// A crossed change is a break too.
func TestFollowerResyncsOnceABreak(t *testing.T) {
	for _, tc := range []struct {
		d     exchangetest.Dialect
		topic string
		inst  string
	}{
		{deribit.Name, "book.BTC-PERPETUAL.100ms", "BTC-PERPETUAL"},
		{ethereal.Name, "L2Book:BTCUSD", "BTCUSD"},
	} {
		t.Run(string(tc.d), func(t *testing.T) {
			srv := exchangetest.NewServer(tc.d)
			t.Cleanup(srv.Close)
			srv.StartFeed(exchangetest.FeedOptions{Instruments: []string{tc.inst}, Interval: 5 * time.Millisecond})
			f := followOn(t, srv, tc.d, tc.topic)
			require.Equal(t, book.Synced, next(t, f).Kind)

			require.NoError(t, srv.LoseBookChanges(tc.topic, 3))
			ev := next(t, f)
			require.Equal(t, book.Broken, ev.Kind)
			assert.ErrorIs(t, ev.Err, book.ErrBreak)
			assert.True(t, ev.Resynced)
			require.Equal(t, book.Synced, next(t, f).Kind, "the resync's snapshot")
			assert.EqualValues(t, 1, f.Resyncs(), "one resync for one break")
			assert.EqualValues(t, 1, f.Stats().Breaks)

			// The test exchange's own book is crossed until its next
			// change, so a resync's snapshot may be crossed too: each is
			// a break of its own, until the book is whole again.
			require.NoError(t, srv.CrossBook(tc.topic))
			ev = next(t, f)
			require.Equal(t, book.Broken, ev.Kind)
			assert.Contains(t, ev.Err.Error(), "crossed")
			for ev = next(t, f); ev.Kind == book.Broken; ev = next(t, f) {
				assert.Contains(t, ev.Err.Error(), "crossed")
			}
			require.Equal(t, book.Synced, ev.Kind)

			srv.StopFeed()
			fresh := followOn(t, srv, tc.d, tc.topic)
			require.Equal(t, book.Synced, next(t, fresh).Kind)
			require.Eventually(t, func() bool {
				a, b := f.Copy(), fresh.Copy()
				return a.Valid && b.Valid && a.Seq == b.Seq && assert.ObjectsAreEqual(a.Bids, b.Bids) && assert.ObjectsAreEqual(a.Asks, b.Asks)
			}, 10*time.Second, 10*time.Millisecond, "the resynced book is the exchange's")
		})
	}
}

// A book whose every message is whole (OKX's books5) is not marked
// snapshot by the client; its first message makes the book valid all the
// same, and the follower says Synced.
func TestFollowerSyncsAWholeEveryTimeBook(t *testing.T) {
	const topic = "books5:BTC-USDT"
	srv := exchangetest.NewServer(okx.Name)
	t.Cleanup(srv.Close)
	f := followOn(t, srv, okx.Name, topic)
	require.NoError(t, srv.WaitSubscribers(testutil.Context(t), topic, 1))
	require.Equal(t, 1, srv.PublishRaw([]byte(`{"arg":{"channel":"books5","instId":"BTC-USDT"},"data":[{"asks":[["8476.98","415","0","13"]],"bids":[["8476.97","256","0","12"]],"instId":"BTC-USDT","ts":"1597026383085","seqId":123456}]}`)))
	require.Equal(t, book.Synced, next(t, f).Kind)
	bid, ask, ok := f.Best()
	require.True(t, ok)
	assert.Equal(t, lvl("8476.97", "256"), bid)
	assert.Equal(t, lvl("8476.98", "415"), ask)
}

// Thalex's book changes name no predecessor, so a change lost on the
// client's side (here a frame over the read limit, dropped, its topic's
// next message flagged FlagGap) is a hole the book cannot see itself:
// the follower takes the gap as a break, asks for one resync, and the
// fresh snapshot makes the book the exchange's again. Before, the next
// change was applied over the hole and the book, valid, lied.
func TestFollowerTakesAGapAsABreak(t *testing.T) {
	const topic, inst = "book.BTC-PERPETUAL.none.10.100ms", "BTC-PERPETUAL"
	srv := exchangetest.NewServer(thalex.Name)
	t.Cleanup(srv.Close)
	srv.StartFeed(exchangetest.FeedOptions{Instruments: []string{inst}, Interval: 5 * time.Millisecond})
	ctx := testutil.Context(t)
	c, err := client.Dial(ctx, srv.URL(), client.WithProtocol(thalex.Protocol()), client.WithReadLimit(8<<10))
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	f, err := book.Follow(ctx, c, topic)
	require.NoError(t, err)
	t.Cleanup(func() { _ = f.Close(context.Background()) })
	require.Equal(t, book.Synced, next(t, f).Kind)

	srv.Publish(topic, []byte(`{"bid_changes":[],"ask_changes":[],"pad":"`+strings.Repeat("x", 16<<10)+`"}`))
	ev := next(t, f)
	require.Equal(t, book.Broken, ev.Kind)
	assert.ErrorIs(t, ev.Err, book.ErrBreak)
	assert.Contains(t, ev.Err.Error(), "lost before this change")
	assert.True(t, ev.Resynced)
	require.Equal(t, book.Synced, next(t, f).Kind, "the resync's snapshot")
	assert.EqualValues(t, 1, f.Resyncs())
	assert.True(t, f.Valid())
}
