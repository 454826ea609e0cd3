package sidecar_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/pkg/book"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/deribit"
	"github.com/wsfan/wsfan/pkg/ethereal"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/kraken"
	"github.com/wsfan/wsfan/pkg/okx"
	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/sidecar"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// bookCases are the exchanges with books, each with a book topic of the
// test exchange's feed.
var bookCases = []struct {
	d       exchangetest.Dialect
	topic   string
	chained bool // the exchange chains its changes, so a lost one shows
}{
	{deribit.Name, "book.BTC-PERPETUAL.100ms", true},
	{thalex.Name, "book.BTC-PERPETUAL.none.10.100ms", false},
	{ethereal.Name, "L2Book:BTCUSD", true},
	{okx.Name, "books:BTC-USDT", true},
	{kraken.Name, "book:BTC/USD:10", true}, // a lost change fails the checksum
}

// follow keeps the book of topic over a client of dialect d connected
// to url, until the end of the test.
func follow(t *testing.T, d exchangetest.Dialect, url, topic string) *book.Follower {
	t.Helper()
	p, err := protocol.ByName(string(d))
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, url, client.WithProtocol(p), client.WithRequestTimeout(5*time.Second))
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	f, err := book.Follow(ctx, c, topic)
	require.NoError(t, err)
	return f
}

// moving waits until f is valid and has applied n more changes.
func moving(t *testing.T, f *book.Follower, n uint64) {
	t.Helper()
	from := f.Stats().Changes
	require.Eventually(t, func() bool { return f.Valid() && f.Stats().Changes >= from+n },
		10*time.Second, 5*time.Millisecond, "book %s moving", f.Topic())
}

// sameBooks waits until every follower holds want's book, valid.
func sameBooks(t *testing.T, want *book.Follower, others ...*book.Follower) {
	t.Helper()
	var w, g book.State
	require.Eventually(t, func() bool {
		want.CopyTo(&w)
		if !w.Valid || len(w.Bids) == 0 {
			return false
		}
		for _, f := range others {
			f.CopyTo(&g)
			if !g.Valid || !assert.ObjectsAreEqual(w.Bids, g.Bids) || !assert.ObjectsAreEqual(w.Asks, g.Asks) || w.Seq != g.Seq {
				return false
			}
		}
		return true
	}, 10*time.Second, 10*time.Millisecond)
	for _, f := range others {
		f.CopyTo(&g)
		require.Equal(t, w.Bids, g.Bids, "bids")
		require.Equal(t, w.Asks, g.Asks, "asks")
	}
}

// Through the sidecar, the first program and a late one both hold the
// exchange's book exactly, as a program connected to the exchange does:
// the first gets the exchange's snapshot, the late one the sidecar's,
// then the same chain; after a change lost upstream (one resync, every
// program gets the fresh snapshot) and after an upstream restart too.
func TestBooksThroughTheSidecar(t *testing.T) {
	for _, tc := range bookCases {
		t.Run(string(tc.d), func(t *testing.T) {
			r := newRig(t, tc.d, func(c *sidecar.Config) { c.LastMessageCache = true })
			r.up.StartFeed(exchangetest.FeedOptions{Instruments: []string{instrumentOf(tc.topic)}, Interval: 10 * time.Millisecond})

			direct := follow(t, tc.d, r.up.URL(), tc.topic)
			first := follow(t, tc.d, r.wsURL(), tc.topic)
			moving(t, first, 5)
			late := follow(t, tc.d, r.wsURL(), tc.topic)
			moving(t, late, 5)
			r.up.StopFeed()
			sameBooks(t, direct, first, late)
			assert.Zero(t, first.Stats().Breaks+late.Stats().Breaks, "no program saw a broken chain")

			if tc.chained {
				r.up.StartFeed(exchangetest.FeedOptions{Instruments: []string{instrumentOf(tc.topic)}, Interval: 10 * time.Millisecond})
				require.NoError(t, r.up.LoseBookChanges(tc.topic, 1))
				require.Eventually(t, func() bool { return direct.Stats().Breaks > 0 }, 10*time.Second, 5*time.Millisecond)
				moving(t, first, 5)
				moving(t, late, 5)
				r.up.StopFeed()
				sameBooks(t, direct, first, late)
			}

			r.up.StartFeed(exchangetest.FeedOptions{Instruments: []string{instrumentOf(tc.topic)}, Interval: 10 * time.Millisecond})
			r.up.Stop()
			require.NoError(t, r.up.Start())
			moving(t, direct, 5)
			moving(t, first, 5)
			moving(t, late, 5)
			r.up.StopFeed()
			sameBooks(t, direct, first, late)
		})
	}
}

// instrumentOf is the instrument of a feed's book topic.
func instrumentOf(topic string) string {
	switch {
	case topic == "L2Book:BTCUSD":
		return "BTCUSD"
	case topic == "books:BTC-USDT":
		return "BTC-USDT"
	case topic == "book:BTC/USD:10":
		return "BTC/USD"
	default:
		return "BTC-PERPETUAL"
	}
}

// A script reads a book as JSON, and a page as a stream conflated to
// ?hz=; both hold the exchange's book; /v1/status describes it.
func TestBookOverHTTP(t *testing.T) {
	topic := "book.BTC-PERPETUAL.100ms"
	r := newRig(t, deribit.Name, nil)
	r.up.StartFeed(exchangetest.FeedOptions{Instruments: []string{"BTC-PERPETUAL"}, Interval: 5 * time.Millisecond})

	code, body := httpGet(t, r.url+"/v1/book?instrument=BTC-PERPETUAL")
	require.EqualValues(t, http.StatusNotFound, code, "nothing held or offered yet: %s", body)
	assert.Contains(t, body, "name one with ?topic=")
	code, body = httpGet(t, r.url+"/v1/book?topic=ticker.BTC-PERPETUAL.100ms")
	require.EqualValues(t, http.StatusBadRequest, code)
	assert.Contains(t, body, "not an order book topic of deribit")
	code, _ = httpGet(t, r.url+"/v1/book?topic="+topic+"&depth=0")
	require.EqualValues(t, http.StatusBadRequest, code)

	// The stream: at most hz books a second, each whole and valid.
	st := openSSE(t, r.url+"/v1/book/stream?topic="+topic+"&hz=5&depth=3", "")
	assert.Contains(t, st.next(t).comment, "at most 5 updates a second")
	start := time.Now()
	events := 0
	for time.Since(start) < time.Second {
		var b struct {
			Topic      string
			Valid      bool
			Bids, Asks [][2]string
		}
		require.NoError(t, json.Unmarshal([]byte(st.next(t).data), &b))
		require.True(t, b.Valid)
		require.Len(t, b.Bids, 3)
		require.Len(t, b.Asks, 3)
		events++
	}
	assert.LessOrEqual(t, events, 5+2, "conflated: the feed sent about 200 changes in that second")

	// By instrument, now that the sidecar holds a book of it; the same
	// book as a program connected to the exchange.
	direct := follow(t, deribit.Name, r.up.URL(), topic)
	moving(t, direct, 3)
	r.up.StopFeed()
	var want book.State
	require.Eventually(t, func() bool {
		direct.CopyTo(&want)
		code, body = httpGet(t, r.url+"/v1/book?instrument=BTC-PERPETUAL&depth=1000")
		var got struct {
			Seq        int64
			Bids, Asks [][2]string
		}
		return code == http.StatusOK && json.Unmarshal([]byte(body), &got) == nil && got.Seq == want.Seq
	}, 10*time.Second, 20*time.Millisecond)
	var got struct {
		Valid       bool
		Bids, Asks  [][2]string
		Mid, Spread string
	}
	require.NoError(t, json.Unmarshal([]byte(body), &got))
	require.True(t, got.Valid)
	require.Len(t, got.Bids, len(want.Bids))
	for i, l := range want.Bids {
		assert.Equal(t, [2]string{l.Price.String(), l.Size.String()}, got.Bids[i])
	}
	assert.Equal(t, want.Asks[0].Price.Sub(want.Bids[0].Price).String(), got.Spread)

	// The status shows the same book; a change the stopped feed still had
	// on its way may move both, so they are compared as of one moment.
	var bs *sidecar.BookStatus
	require.Eventually(t, func() bool {
		direct.CopyTo(&want)
		bs = nil
		for _, ts := range r.sc.Status().Topics {
			if ts.Topic == topic {
				bs = ts.Book
			}
		}
		return bs != nil && bs.BestBid == want.Bids[0].Price.String()
	}, 10*time.Second, 20*time.Millisecond, "the held book in /v1/status")
	assert.True(t, bs.Valid)
	assert.Equal(t, len(want.Asks), bs.AskLevels)
}

// Programs that join a book while its changes come fast each get a
// snapshot and then exactly the changes after it: none sees a broken
// chain. (A change applied to the sidecar's book before a joiner's
// snapshot was taken, and then sent it as well, broke its chain.)
func TestLateJoinersDuringAFastFeedSeeNoBreak(t *testing.T) {
	const topic = "book.BTC-PERPETUAL.100ms"
	r := newRig(t, deribit.Name, nil)
	r.up.StartFeed(exchangetest.FeedOptions{Instruments: []string{"BTC-PERPETUAL"}, Interval: time.Millisecond})
	t.Cleanup(r.up.StopFeed)
	var joiners []*book.Follower
	for range 30 {
		joiners = append(joiners, follow(t, deribit.Name, r.wsURL(), topic))
		time.Sleep(3 * time.Millisecond)
	}
	for i, f := range joiners {
		moving(t, f, 20)
		assert.Zero(t, f.Stats().Breaks, "joiner %d saw a broken chain", i)
	}
}
