package okx_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/book"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/okx"
)

// push is a books push of BTC-USDT as OKX writes it, checksum 0.
func push(action string, prev, seq int64, asks, bids string) []byte {
	return []byte(`{"arg":{"channel":"books","instId":"BTC-USDT"},"action":"` + action + `","data":[{"asks":` + asks +
		`,"bids":` + bids + `,"ts":"1597026383085","checksum":0,"prevSeqId":` + strconv.FormatInt(prev, 10) +
		`,"seqId":` + strconv.FormatInt(seq, 10) + `}]}`)
}

// The order book channel's own example of its sequence
// (https://www.okx.com/docs-v5/en/#order-book-trading-market-data-ws-order-book-channel,
// "Sequence ID"): a snapshot (prevSeqId -1, seqId 10), a change (10 →
// 15), a quiet book's empty update (15 → 15), a reset after maintenance
// (15 → 3) and a change after it (3 → 5), every one with checksum 0. A
// client and a book following them see no gap, no break and a valid book
// throughout, and the book ends at seqId 5.
func TestDocumentedSequenceKeepsTheBook(t *testing.T) {
	const topic = "books:BTC-USDT"
	srv := exchangetest.NewServer(okx.Name)
	t.Cleanup(srv.Close)
	ctx := testutil.Context(t)
	c, err := client.Dial(ctx, srv.URL(), client.WithProtocol(okx.Protocol()))
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	sub, err := c.Subscribe(ctx, []string{topic})
	require.NoError(t, err)
	require.NoError(t, srv.WaitSubscribers(ctx, topic, 1))

	b := book.New(topic, okx.BookRules(topic))
	frames := [][]byte{
		push("snapshot", -1, 10, `[["8476.98","415","0","13"],["8477","7","0","2"]]`, `[["8476.97","256","0","12"],["8475.55","101","0","1"]]`),
		push("update", 10, 15, `[["8477","0","0","0"]]`, `[["8476","3","0","1"]]`),
		push("update", 15, 15, `[]`, `[]`),
		push("update", 15, 3, `[["8478","2","0","1"]]`, `[]`),
		push("update", 3, 5, `[]`, `[["8475.55","0","0","0"]]`),
	}
	for i, f := range frames {
		require.Equal(t, 1, srv.PublishRaw(f))
		select {
		case m := <-sub.C():
			assert.Zero(t, m.Flags&client.FlagGap, "message %d: no gap", i)
			assert.Equal(t, i == 0, m.Snapshot(), "message %d: only the first is whole", i)
			require.NoError(t, b.Apply(m.Data, m.Snapshot()), "message %d", i)
			require.True(t, b.Valid(), "message %d: valid", i)
		case <-ctx.Done():
			t.Fatalf("message %d never came", i)
		}
	}
	assert.EqualValues(t, 5, b.Seq())
	assert.Zero(t, b.Stats().Breaks)
	bids, asks := b.Depth()
	assert.Equal(t, 2, bids, "8476.97 and 8476; 8475.55 removed")
	assert.Equal(t, 2, asks, "8476.98 and 8478; 8477 removed")
}

// A change whose prevSeqId is not the last seqId leaves the book invalid
// at once, with one break however many changes follow it, until the
// next snapshot makes it valid again.
func TestSkippedPrevSeqIDBreaksTheBookOnce(t *testing.T) {
	const topic = "books:BTC-USDT"
	b := book.New(topic, okx.BookRules(topic))
	data := func(action string, prev, seq int64) []byte {
		f := push(action, prev, seq, `[["101","1","0","1"]]`, `[["100","1","0","1"]]`)
		return f[len(`{"arg":{"channel":"books","instId":"BTC-USDT"},"action":"`+action+`","data":`) : len(f)-1]
	}
	require.NoError(t, b.Apply(data("snapshot", -1, 100), true))
	require.NoError(t, b.Apply(data("update", 100, 104), false))
	var brk *book.BreakError
	require.ErrorAs(t, b.Apply(data("update", 110, 111), false), &brk, "104 was the last: 110 skips")
	assert.False(t, b.Valid(), "invalid at once")
	require.NoError(t, b.Apply(data("update", 111, 112), false), "the changes after a break are ignored")
	assert.False(t, b.Valid())
	assert.EqualValues(t, 1, b.Stats().Breaks, "one break, so one resync")
	require.NoError(t, b.Apply(data("snapshot", -1, 130), true))
	assert.True(t, b.Valid())
}

// seqId 0 is a number like any other ("the smallest possible sequence ID
// value is 0"): a change naming 0 follows a book at 0, and breaks a book
// at 4, where a reader taking 0 for "no previous message" would apply it
// unchecked. The client's own gap check agrees.
func TestSeqIDZeroIsNotNone(t *testing.T) {
	const topic = "books:BTC-USDT"
	b := book.New(topic, okx.BookRules(topic))
	data := func(prev, seq int64) []byte {
		return []byte(`[{"asks":[["101","1","0","1"]],"bids":[["100","1","0","1"]],"ts":"1","checksum":0,"prevSeqId":` +
			strconv.FormatInt(prev, 10) + `,"seqId":` + strconv.FormatInt(seq, 10) + `}]`)
	}
	require.NoError(t, b.Apply(data(-1, 0), false), "prevSeqId -1 marks the snapshot even unmarked")
	require.True(t, b.Valid())
	require.NoError(t, b.Apply(data(0, 4), false))
	assert.True(t, b.Valid())
	var brk *book.BreakError
	require.ErrorAs(t, b.Apply(data(0, 6), false), &brk, "the book is at 4, not 0")

	p := okx.Protocol()
	id, prev, ok := p.Sequence(data(-1, 0))
	require.True(t, ok)
	assert.Zero(t, prev, "a snapshot names no previous message")
	id2, prev2, ok := p.Sequence(data(0, 4))
	require.True(t, ok)
	assert.Equal(t, id, prev2, "the change names the snapshot, seqId 0")
	assert.NotEqual(t, id, id2)
}

// The checksum is never checked: a book whose every push says checksum 0
// (and one that says anything else) stays valid.
func TestChecksumIsNeverChecked(t *testing.T) {
	const topic = "books:BTC-USDT"
	b := book.New(topic, okx.BookRules(topic))
	require.NoError(t, b.Apply([]byte(`[{"asks":[["101","1","0","1"]],"bids":[["100","1","0","1"]],"ts":"1","checksum":0,"prevSeqId":-1,"seqId":7}]`), true))
	require.NoError(t, b.Apply([]byte(`[{"asks":[["102","1","0","1"]],"bids":[],"ts":"2","checksum":-855196043,"prevSeqId":7,"seqId":9}]`), false))
	assert.True(t, b.Valid())
	assert.Zero(t, b.Stats().Breaks)
}

// books5 and bbo-tbt send the whole book in every push, without action
// or prevSeqId: each replaces the book.
func TestWholeBookChannels(t *testing.T) {
	for _, topic := range []string{"books5:BCH-USDT-SWAP", "bbo-tbt:BCH-USDT-SWAP"} {
		b := book.New(topic, okx.BookRules(topic))
		require.NoError(t, b.Apply([]byte(`[{"asks":[["111.06","55154","0","2"],["111.07","1","0","1"]],"bids":[["111.05","57745","0","2"]],"ts":"1670324386802","seqId":363996337}]`), false))
		require.NoError(t, b.Apply([]byte(`[{"asks":[["111.08","5","0","2"]],"bids":[["111.05","7","0","2"]],"ts":"1670324386812","seqId":363996340}]`), false))
		bids, asks := b.Depth()
		assert.Equal(t, 1, bids, topic)
		assert.Equal(t, 1, asks, "%s: the second push replaced the first", topic)
		assert.True(t, b.Valid())
	}
	assert.Nil(t, okx.BookRules("tickers:BTC-USDT"))
	assert.Nil(t, okx.BookRules("books:instType=SPOT"))
}

// A follower of a book whose chain breaks upstream (a change lost) sees
// one break, resubscribes once and holds the exchange's book again.
func TestLostChangeResyncsOnce(t *testing.T) {
	const topic = "books:BTC-USDT"
	srv := exchangetest.NewServer(okx.Name)
	t.Cleanup(srv.Close)
	srv.StartFeed(exchangetest.FeedOptions{Instruments: []string{"BTC-USDT"}, Interval: 5 * time.Millisecond})
	t.Cleanup(srv.StopFeed)
	ctx := testutil.Context(t)
	c, err := client.Dial(ctx, srv.URL(), client.WithProtocol(okx.Protocol()))
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	f, err := book.Follow(ctx, c, topic)
	require.NoError(t, err)
	t.Cleanup(func() { _ = f.Close(context.Background()) })
	require.Eventually(t, func() bool { return f.Valid() && f.Stats().Changes > 5 }, 10*time.Second, 5*time.Millisecond)
	require.Equal(t, 1, srv.CountSubscribes(topic))

	require.NoError(t, srv.LoseBookChanges(topic, 1))
	require.Eventually(t, func() bool { return f.Stats().Breaks == 1 && f.Valid() }, 10*time.Second, 5*time.Millisecond)
	changes := f.Stats().Changes
	require.Eventually(t, func() bool { return f.Stats().Changes > changes+5 }, 10*time.Second, 5*time.Millisecond)
	assert.EqualValues(t, 1, f.Stats().Breaks)
	assert.Equal(t, 2, srv.CountSubscribes(topic), "one resync")
}
