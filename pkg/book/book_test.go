package book_test

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/pkg/book"
	"github.com/wsfan/wsfan/pkg/deribit"
	"github.com/wsfan/wsfan/pkg/ethereal"
	"github.com/wsfan/wsfan/pkg/thalex"
)

func dec(s string) book.Decimal {
	d, err := book.ParseDecimal([]byte(s))
	if err != nil {
		panic(err)
	}
	return d
}

func lvl(price, size string) book.Level { return book.Level{Price: dec(price), Size: dec(size)} }

func TestDecimal(t *testing.T) {
	for in, want := range map[string]string{
		"5042.34": "5042.34", "30": "30", `"68013.0"`: "68013", "-0.5": "-0.5", "1.5e-3": "0.0015",
		"0.00000001": "0.00000001", "2E+3": "2000", "0": "0", "1683901254.785744": "1683901254.785744",
		// OKX's 1e-12 ticks, sizes beyond 10^10, Ethereum's 18 decimals.
		`"0.0000007465"`: "0.0000007465", "0.000000000001": "0.000000000001", `"2290075956"`: "2290075956",
		"123456789012.000000000001": "123456789012.000000000001", "1.000000000000000001": "1.000000000000000001",
		"1e-18": "0.000000000000000001", "1.50000000000000000000000": "1.5", "92233720368.54775808": "92233720368.54775808",
		// The bounds, past 2^64 units and past a uint64's integer part.
		"170141183460469231731.687303715884105727":  "170141183460469231731.687303715884105727",
		"-170141183460469231731.687303715884105728": "-170141183460469231731.687303715884105728",
		"18446744073709551616":                      "18446744073709551616",
		"-18.446744073709551616":                    "-18.446744073709551616",
	} {
		d, err := book.ParseDecimal([]byte(in))
		require.NoError(t, err, in)
		assert.Equal(t, want, d.String(), in)
	}
	for _, bad := range []string{"", `""`, "abc", "1.0000000000000000001", "1e99", "1e21000", "1..2", "--1", "1e", "0x10",
		"170141183460469231731.687303715884105728", "-170141183460469231731.687303715884105729", "1e21",
		"1234567890123456789012345678901234567890"} {
		_, err := book.ParseDecimal([]byte(bad))
		assert.ErrorIs(t, err, book.ErrDecimal, bad)
	}
	_, err := book.ParseDecimal([]byte("0.0000000000000000001"))
	assert.ErrorContains(t, err, "more than 18 fractional digits", "refused, never rounded")
	assert.Equal(t, dec("0.3"), dec("0.1").Add(dec("0.2")), "exact, unlike float64")
}

// The order, the arithmetic and the conversions agree with the decimal
// text across the words' boundaries and the sign.
func TestDecimalArithmetic(t *testing.T) {
	sorted := []string{"-170141183460469231731.687303715884105728", "-18.446744073709551617", "-18.446744073709551616",
		"-1", "-0.000000000000000001", "0", "0.000000000000000001", "0.0000007464", "0.0000007465", "1",
		"18.446744073709551615", "18.446744073709551616", "2290075956", "170141183460469231731.687303715884105727"}
	for i, a := range sorted {
		for j, b := range sorted {
			want := 0
			if i < j {
				want = -1
			} else if i > j {
				want = 1
			}
			assert.Equal(t, want, dec(a).Cmp(dec(b)), "%s vs %s", a, b)
		}
	}
	assert.Equal(t, "18.446744073709551616", dec("18.446744073709551615").Add(dec("0.000000000000000001")).String(), "a carry into the high word")
	assert.Equal(t, "-0.000000000000000001", dec("0").Sub(dec("0.000000000000000001")).String())
	assert.Equal(t, "0.0000000005", dec("0.0000007465").Sub(dec("0.000000746")).String())
	assert.Equal(t, "0.00000074625", dec("0.0000007465").Add(dec("0.000000746")).Half().String(), "a mid price")
	assert.Equal(t, "-0.5", dec("-1").Half().String())
	assert.Equal(t, "-0.000000000000000001", dec("-0.000000000000000003").Half().String(), "truncated toward zero")
	assert.True(t, dec("-0").IsZero())
	assert.Equal(t, dec("5042.34"), book.NewDecimal(504234, 2))
	assert.Equal(t, dec("-9.223372036854775808"), book.NewDecimal(math.MinInt64, 18))
	assert.Equal(t, dec("0.000000000000000001"), book.NewDecimal(123, 20), "past Scale, truncated")
	ns, ok := dec("1683901254.885744").Units(9)
	assert.True(t, ok)
	assert.EqualValues(t, 1683901254885744000, ns)
	_, ok = dec("9223372036.854775808").Units(9)
	assert.False(t, ok, "past an int64")
	ns, ok = dec("-9223372036.854775808").Units(9)
	assert.True(t, ok)
	assert.EqualValues(t, math.MinInt64, ns)
	assert.Equal(t, "0.1", book.DecimalOf(0.1).String())
	assert.Equal(t, "-2290075956.5", book.DecimalOf(-2290075956.5).String())
	assert.Equal(t, 0.0000007465, dec("0.0000007465").Float64())
	assert.InDelta(t, -1.7014118346046923e20, dec("-170141183460469231731.687303715884105728").Float64(), 1e5)
}

// Reading, comparing and writing a Decimal allocate nothing.
func TestDecimalAllocatesNothing(t *testing.T) {
	in := []byte(`"170141183460469231731.687303715884105727"`)
	buf := make([]byte, 0, 64)
	allocs := testing.AllocsPerRun(100, func() {
		d, err := book.ParseDecimal(in)
		if err != nil || d.Cmp(d.Half()) <= 0 {
			panic(err)
		}
		buf = d.AppendTo(buf[:0])
	})
	assert.Zero(t, allocs)
}

// Deribit's documented example: a snapshot, then a change chained by
// prev_change_id (docs.deribit.com, book.{instrument_name}.{interval}).
func TestDeribitDocumentedBook(t *testing.T) {
	b := book.New("book.BTC-PERPETUAL.100ms", deribit.BookRules("book.BTC-PERPETUAL.100ms"))
	assert.False(t, b.Valid(), "no snapshot yet")
	require.NoError(t, b.Apply([]byte(`{"type":"snapshot","timestamp":1554373962454,"instrument_name":"BTC-PERPETUAL","change_id":297217,"bids":[["new",5042.34,30],["new",5041.94,20]],"asks":[["new",5042.64,40],["new",5043.3,40]]}`), false))
	bid, ask, ok := b.Best()
	require.True(t, ok)
	assert.Equal(t, lvl("5042.34", "30"), bid)
	assert.Equal(t, lvl("5042.64", "40"), ask)
	require.NoError(t, b.Apply([]byte(`{"type":"change","timestamp":1554373911330,"prev_change_id":297217,"instrument_name":"BTC-PERPETUAL","change_id":297218,"bids":[["delete",5041.94,0]],"asks":[["change",5042.64,35]]}`), false))
	s := b.Copy()
	assert.Equal(t, []book.Level{lvl("5042.34", "30")}, s.Bids)
	assert.Equal(t, []book.Level{lvl("5042.64", "35"), lvl("5043.3", "40")}, s.Asks)
	assert.EqualValues(t, 297218, s.Seq)
	assert.EqualValues(t, 1554373911330, s.Time.UnixMilli())

	// The snapshot a late joiner gets reads back as the same book.
	snap, ok := b.AppendSnapshot(nil)
	require.True(t, ok)
	assert.JSONEq(t, `{"type":"snapshot","timestamp":1554373911330,"instrument_name":"BTC-PERPETUAL","change_id":297218,"bids":[["new",5042.34,30]],"asks":[["new",5042.64,35],["new",5043.3,40]]}`, string(snap))
	again := book.New(b.Topic(), deribit.BookRules(b.Topic()))
	require.NoError(t, again.Apply(snap, false))
	assert.Equal(t, s, again.Copy())
}

// A change that does not follow the book breaks it at once: one error,
// the changes after it ignored without one, until a snapshot.
func TestBreakIsReportedOnceAndReadersNeverSeeTheStaleBook(t *testing.T) {
	topic := "book.ETH-PERPETUAL.raw"
	b := book.New(topic, deribit.BookRules(topic))
	require.NoError(t, b.Apply([]byte(`{"type":"snapshot","timestamp":1,"change_id":10,"bids":[["new",99,1]],"asks":[["new",101,1]]}`), false))
	err := b.Apply([]byte(`{"type":"change","timestamp":2,"prev_change_id":11,"change_id":12,"bids":[["new",100,1]],"asks":[]}`), false)
	var be *book.BreakError
	require.ErrorAs(t, err, &be)
	assert.ErrorIs(t, err, book.ErrBreak)
	assert.Contains(t, err.Error(), "follows 11, the book is at 10")
	_, _, ok := b.Best()
	assert.False(t, ok, "a reader never gets a book known to be stale")
	bids, _, ok := b.Top(10, nil, nil)
	assert.False(t, ok)
	assert.Len(t, bids, 1, "the levels are there, marked invalid")
	for range 3 {
		assert.NoError(t, b.Apply([]byte(`{"type":"change","timestamp":3,"prev_change_id":12,"change_id":13,"bids":[],"asks":[]}`), false), "ignored while the resync is under way")
	}
	require.NoError(t, b.Apply([]byte(`{"type":"snapshot","timestamp":4,"change_id":20,"bids":[["new",98,2]],"asks":[["new",102,2]]}`), false))
	bid, ask, ok := b.Best()
	require.True(t, ok)
	assert.Equal(t, lvl("98", "2"), bid)
	assert.Equal(t, lvl("102", "2"), ask)
	assert.Equal(t, book.Stats{Snapshots: 2, Changes: 0, Ignored: 3, Breaks: 1}, b.Stats())
}

func TestCrossedBookIsABreak(t *testing.T) {
	topic := "book.BTC-PERPETUAL.100ms"
	b := book.New(topic, deribit.BookRules(topic))
	require.NoError(t, b.Apply([]byte(`{"type":"snapshot","timestamp":1,"change_id":1,"bids":[["new",99,1]],"asks":[["new",101,1]]}`), false))
	err := b.Apply([]byte(`{"type":"change","timestamp":2,"prev_change_id":1,"change_id":2,"bids":[["new",101,1]],"asks":[]}`), false)
	require.ErrorIs(t, err, book.ErrBreak)
	assert.Contains(t, err.Error(), "crossed: best bid 101, best ask 101")
	assert.False(t, b.Valid())
}

// Thalex's book: the first notification, marked snapshot in its
// envelope, carries the whole book as changes; no sequence to check.
func TestThalexBook(t *testing.T) {
	topic := "book.BTC-PERPETUAL.none.10.100ms"
	b := book.New(topic, thalex.BookRules(topic))
	require.NoError(t, b.Apply([]byte(`{"trades":[[9120.5,15,"buy",156789.103,false]],"bid_changes":[[9120.5,10,10],[9120,5,4]],"ask_changes":[[9121,54,53]],"total_bid_amount":15,"total_ask_amount":54,"time":1683901254.785744}`), true))
	require.NoError(t, b.Apply([]byte(`{"trades":[],"bid_changes":[[9120.5,0,0]],"ask_changes":[[9121.5,3,3]],"total_bid_amount":5,"total_ask_amount":57,"time":1683901254.885744}`), false))
	s := b.Copy()
	assert.Equal(t, []book.Level{{Price: dec("9120"), Size: dec("5"), Aux: dec("4")}}, s.Bids)
	assert.Len(t, s.Asks, 2)
	assert.Equal(t, int64(1683901254885744000), s.Time.UnixNano())
	snap, ok := b.AppendSnapshot(nil)
	require.True(t, ok)
	assert.JSONEq(t, `{"trades":[],"bid_changes":[[9120,5,4]],"ask_changes":[[9121,54,53],[9121.5,3,3]],"total_bid_amount":5,"total_ask_amount":57,"time":1683901254.885744}`, string(snap))
	assert.Nil(t, thalex.BookRules("ticker.BTC-PERPETUAL.raw"))
}

// A change that follows lost messages breaks a book whose changes name
// no predecessor (Thalex's): one break, none more until the snapshot; a
// whole book after a gap is no break.
func TestApplyAfterGap(t *testing.T) {
	topic := "book.BTC-PERPETUAL.none.10.100ms"
	b := book.New(topic, thalex.BookRules(topic))
	snapshot := []byte(`{"bid_changes":[[9120.5,10,10]],"ask_changes":[[9121,54,53]],"time":1683901254.785744}`)
	change := []byte(`{"bid_changes":[[9120.5,0,0]],"ask_changes":[[9121.5,3,3]],"time":1683901254.885744}`)
	require.NoError(t, b.Apply(snapshot, true))
	err := b.ApplyAfterGap(change, false)
	require.ErrorIs(t, err, book.ErrBreak)
	assert.Contains(t, err.Error(), "lost before this change")
	assert.False(t, b.Valid())
	assert.NoError(t, b.ApplyAfterGap(change, false), "broken already: its resync is under way")
	require.NoError(t, b.ApplyAfterGap(snapshot, true), "a whole book mends a gap")
	assert.True(t, b.Valid())
	assert.Equal(t, book.Stats{Snapshots: 2, Ignored: 2, Breaks: 1}, b.Stats())
}

// Ethereal's L2Book: the whole book first (flagged by the client), then
// changes chained by pt = the previous t, quantities as strings.
func TestEtherealBook(t *testing.T) {
	b := book.New("L2Book:BTCUSD", ethereal.BookRules("L2Book:BTCUSD"))
	require.NoError(t, b.Apply([]byte(`{"e":"L2Book","t":1737043200123,"data":{"s":"BTCUSD","t":1737043200123,"pt":1737043200023,"a":[["68013.0","0.4"],["68013.5","1.1"]],"b":[["68012.5","1.25"],["68012.0","0.4"]]}}`), true))
	require.NoError(t, b.Apply([]byte(`{"e":"L2Book","t":1737043200223,"data":{"s":"BTCUSD","t":1737043200223,"pt":1737043200123,"a":[["68013.0","0"]],"b":[["68012.5","2"]]}}`), false))
	bid, ask, ok := b.Best()
	require.True(t, ok)
	assert.Equal(t, lvl("68012.5", "2"), bid)
	assert.Equal(t, lvl("68013.5", "1.1"), ask)
	err := b.Apply([]byte(`{"e":"L2Book","t":1737043200423,"data":{"s":"BTCUSD","t":1737043200423,"pt":1737043200323,"a":[],"b":[]}}`), false)
	assert.ErrorIs(t, err, book.ErrBreak, "a pt that is not the last t")
	snap, ok := book.New("L2Book:BTCUSD", ethereal.BookRules("L2Book:BTCUSD")).AppendSnapshot(nil)
	assert.False(t, ok, "no snapshot of an invalid book")
	assert.Empty(t, snap)
}

func TestMalformedMessage(t *testing.T) {
	topic := "book.BTC-PERPETUAL.100ms"
	b := book.New(topic, deribit.BookRules(topic))
	for _, bad := range []string{`{"last_price":1}`, `[1,2]`, `{"type":"snapshot","change_id":1,"bids":[["new","x",1]]}`, `{"type":"snapshot","change_id":1,"bids":[[1]]}`} {
		err := b.Apply([]byte(bad), false)
		assert.True(t, errors.Is(err, book.ErrMalformed), "%s: %v", bad, err)
	}
}

// A reader is told the book changed without polling Seq: Changed's
// channel closes at the next snapshot, change or break, and a new one is
// handed out after.
func TestChangedWakesAReader(t *testing.T) {
	b := book.New("book.BTC-PERPETUAL.100ms", deribit.BookRules("book.BTC-PERPETUAL.100ms"))
	changed := b.Changed()
	assert.Equal(t, changed, b.Changed(), "the same channel until a change")
	select {
	case <-changed:
		t.Fatal("closed before any change")
	default:
	}
	require.NoError(t, b.Apply([]byte(`{"type":"snapshot","timestamp":1,"instrument_name":"BTC-PERPETUAL","change_id":7,"bids":[["new",5042.34,30]],"asks":[["new",5042.64,40]]}`), false))
	<-changed // closed by the snapshot

	next := b.Changed()
	require.NoError(t, b.Apply([]byte(`{"type":"change","timestamp":2,"prev_change_id":7,"instrument_name":"BTC-PERPETUAL","change_id":8,"bids":[],"asks":[["change",5042.64,35]]}`), false))
	<-next

	broken := b.Changed()
	require.Error(t, b.Apply([]byte(`{"type":"change","timestamp":3,"prev_change_id":99,"instrument_name":"BTC-PERPETUAL","change_id":100,"bids":[],"asks":[]}`), false))
	<-broken
	assert.False(t, b.Valid())
}

// Events print by name, and the zero Event is no kind at all.
func TestEventString(t *testing.T) {
	assert.Equal(t, "synced", book.Event{Kind: book.Synced}.String())
	assert.Equal(t, "broken (resync asked: true)", book.Event{Kind: book.Broken, Resynced: true}.String())
	assert.Equal(t, "EventKind(0)", book.Event{}.String())
}
