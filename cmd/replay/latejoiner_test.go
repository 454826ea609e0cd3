package main

import (
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/book"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/deribit"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/record"
)

const bookTopic = "book.BTC-PERPETUAL.100ms"

// follow applies n messages of sub to a book of topic and returns it,
// with whether the first message was a snapshot.
func follow(t *testing.T, sub *client.Subscription, n int) (*book.Book, bool) {
	t.Helper()
	b := book.New(bookTopic, book.RulesFor("deribit", bookTopic))
	first := true
	firstSnapshot := false
	for range n {
		select {
		case m := <-sub.C():
			if first {
				firstSnapshot, first = m.Flags&client.FlagSnapshot != 0, false
			}
			require.NoError(t, b.Apply(m.Data, m.Flags&client.FlagSnapshot != 0))
		case <-time.After(20 * time.Second):
			t.Fatal("the replay stopped short")
		}
	}
	return b, firstSnapshot
}

// A program that subscribes a book after the replay's clock started gets
// the book as it stands first, rebuilt from the recording (as a
// sidecar gives its late joiners), then the recorded changes: its book
// ends as the first program's does.
func TestLateJoinerGetsTheBookAsItStands(t *testing.T) {
	ctx := testutil.Context(t)
	dir := filepath.Join(t.TempDir(), "rec")
	up := exchangetest.NewServer(deribit.Name)
	defer up.Close()
	rec, err := record.New(dir, deribit.Protocol(), record.Options{})
	require.NoError(t, err)
	up.StartFeed(exchangetest.FeedOptions{Instruments: []string{"BTC-PERPETUAL"}, Interval: 5 * time.Millisecond})
	live, err := client.Dial(ctx, up.URL(), client.WithProtocol(deribit.Protocol()), client.WithFrameTap(rec))
	require.NoError(t, err)
	sub, err := live.Subscribe(ctx, []string{bookTopic}) // its first message: the book's snapshot
	require.NoError(t, err)
	const n = 120
	liveBook, _ := follow(t, sub, n)
	up.StopFeed()
	require.NoError(t, live.Close())
	require.NoError(t, rec.Close())
	require.True(t, liveBook.Valid())

	loaded, err := load(dir, record.Window{})
	require.NoError(t, err)
	srv := exchangetest.NewServer(deribit.Name, exchangetest.WithTopics(loaded.topics...))
	defer srv.Close()
	var wg sync.WaitGroup
	defer wg.Wait()
	played := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(played)
		_, _ = loaded.play(ctx, srv, 1, 0) // as recorded: 5 ms apart
	}()
	dial := func() *client.Subscription {
		c, err := client.Dial(ctx, srv.URL(), client.WithProtocol(deribit.Protocol()))
		require.NoError(t, err)
		t.Cleanup(func() { _ = c.Close() })
		s, err := c.Subscribe(ctx, []string{bookTopic})
		require.NoError(t, err)
		return s
	}
	first := dial()
	var firstBook *book.Book
	wg.Add(1)
	go func() {
		defer wg.Done()
		firstBook, _ = follow(t, first, loaded.count)
	}()
	time.Sleep(200 * time.Millisecond) // some 40 changes in
	late := dial()
	<-played
	// The late joiner got a snapshot and then every change after it: its
	// book ends where the first program's does.
	lateBook := book.New(bookTopic, book.RulesFor("deribit", bookTopic))
	m := <-late.C()
	require.NotZero(t, m.Flags&client.FlagSnapshot, "the late joiner's first message is the book as it stands")
	require.NoError(t, lateBook.Apply(m.Data, true))
	for drained := false; !drained; { // the replay has played: read what is on its way
		select {
		case m := <-late.C():
			require.NoError(t, lateBook.Apply(m.Data, m.Flags&client.FlagSnapshot != 0))
		case <-time.After(time.Second):
			drained = true
		}
	}
	wg.Wait()
	var want, got book.State
	firstBook.CopyTo(&want)
	lateBook.CopyTo(&got)
	assert.True(t, lateBook.Valid())
	assert.Equal(t, want.Bids, got.Bids)
	assert.Equal(t, want.Asks, got.Asks)
}
