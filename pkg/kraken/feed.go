package kraken

import (
	"hash/crc32"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	"github.com/wsfan/wsfan/pkg/venue"
)

// feed makes up Kraken's ticker, trade and book channels. Each pair's
// book is held in whole ticks and lots (integers), so every price and
// qty is written at the pair's precision, trailing zeros included, as
// Kraken writes them; a book topic's subscribers share the depth's view
// of it: a new one gets the top DEPTH levels (Snapshot), every one then
// the levels that changed within that depth, with no removal for a
// level pushed beyond it, and every message carries the CRC32 of the ten
// best levels a side of the whole book
// (https://docs.kraken.com/api/docs/guides/spot-ws-book-v2).
type feed struct {
	rng   *rand.Rand
	now   time.Time
	books map[string]*pairBook // by symbol
	views map[string]*view     // by book topic: what its subscribers hold
	trade int64                // the last trade_id
}

// pair is a made-up pair: its precisions and the price its book stands
// around, in ticks.
type pair struct {
	pricePrec, qtyPrec int
	center             int64
}

// pairs are the feed's pairs: BTC/USD quoted to 1 decimal, ETH/USD to 2,
// SHIB/USD to 8, quantities to 8, 8 and 5.
var pairs = map[string]pair{
	"BTC/USD":  {pricePrec: 1, qtyPrec: 8, center: 650_000},
	"ETH/USD":  {pricePrec: 2, qtyPrec: 8, center: 320_000},
	"SHIB/USD": {pricePrec: 8, qtyPrec: 5, center: 1_234},
}

// pairBook is a pair's whole book: price in ticks → qty in lots.
type pairBook struct {
	pair       pair
	bids, asks map[int64]int64
	stepped    bool  // stepped since the last Advance
	crossNext  bool  // the next step adds a bid at the best ask
	crossed    int64 // that bid's price, taken away by the step after
}

// view is a depth's view of a book: the levels its subscribers hold.
type view struct {
	bids, asks map[int64]int64
}

func newFeed(seed uint64) *feed {
	return &feed{rng: rand.New(rand.NewPCG(seed, seed)), now: time.Now(),
		books: make(map[string]*pairBook), views: make(map[string]*view)}
}

func (*feed) Instruments() []string { return []string{"BTC/USD", "ETH/USD"} }

// Topics are ticker:SYMBOL, trade:SYMBOL and book:SYMBOL:10.
func (*feed) Topics(instruments []string) []venue.FeedTopic {
	var out []venue.FeedTopic
	for _, s := range instruments {
		out = append(out,
			venue.FeedTopic{Topic: "ticker:" + s, Instrument: s, Kind: venue.FeedTicker},
			venue.FeedTopic{Topic: "trade:" + s, Instrument: s, Kind: venue.FeedOther},
			venue.FeedTopic{Topic: "book:" + s + ":10", Instrument: s, Kind: venue.FeedBook})
	}
	return out
}

// Advance moves time on; each book steps at its next message.
func (f *feed) Advance(now time.Time) {
	f.now = now
	for _, b := range f.books {
		b.stepped = false
	}
}

// book returns symbol's book, made on first use.
func (f *feed) book(symbol string) *pairBook {
	b := f.books[symbol]
	if b == nil {
		p, ok := pairs[symbol]
		if !ok {
			p = pair{pricePrec: 2, qtyPrec: 8, center: 10_000}
		}
		b = &pairBook{pair: p, bids: make(map[int64]int64), asks: make(map[int64]int64)}
		for i := int64(1); i <= 30; i++ {
			b.bids[p.center-i] = f.lots()
			b.asks[p.center+i] = f.lots()
		}
		f.books[symbol] = b
	}
	return b
}

// lots is a made-up qty in lots, often with trailing zeros.
func (f *feed) lots() int64 {
	n := 1 + f.rng.Int64N(999)
	for range f.rng.IntN(6) {
		n *= 10
	}
	return n
}

// step changes a few levels of b: a qty, a new level, a level gone,
// never crossing the book.
func (f *feed) step(b *pairBook) {
	if b.crossed != 0 {
		delete(b.bids, b.crossed)
		b.crossed = 0
	}
	if b.crossNext {
		b.crossNext = false
		b.crossed = sortedPrices(b.asks, +1)[0]
		b.bids[b.crossed] = f.lots()
		return
	}
	for range 1 + f.rng.IntN(4) {
		side, sign := b.bids, int64(-1)
		if f.rng.IntN(2) == 0 {
			side, sign = b.asks, 1
		}
		price := b.pair.center + sign*(1+f.rng.Int64N(40))
		if _, ok := side[price]; ok && f.rng.IntN(3) == 0 {
			delete(side, price)
		} else {
			side[price] = f.lots()
		}
	}
}

func (f *feed) Payload(t venue.FeedTopic) []byte {
	switch t.Kind {
	case venue.FeedBook:
		return f.update(t)
	case venue.FeedTicker:
		return f.ticker(t.Instrument)
	}
	return f.tradeData(t.Instrument)
}

// depthOf is a book topic's depth.
func depthOf(topic string) int {
	t, err := parseTopic(topic)
	if err != nil {
		return defaultDepth
	}
	return t.depth()
}

// Snapshot is a book topic's top levels as they stand.
func (f *feed) Snapshot(t venue.FeedTopic) []byte {
	b := f.book(t.Instrument)
	v := f.viewOf(t.Topic, b)
	return f.bookData(t.Instrument, b, levelsOf(v.bids, b.pair, -1), levelsOf(v.asks, b.pair, +1))
}

// viewOf returns the view of topic, made at the book as it stands.
func (f *feed) viewOf(topic string, b *pairBook) *view {
	v := f.views[topic]
	if v == nil {
		n := depthOf(topic)
		v = &view{bids: top(b.bids, -1, n), asks: top(b.asks, +1, n)}
		f.views[topic] = v
	}
	return v
}

// update steps the book (once a round) and returns what changed within
// the topic's depth since its last message.
func (f *feed) update(t venue.FeedTopic) []byte {
	b := f.book(t.Instrument)
	v := f.viewOf(t.Topic, b)
	if !b.stepped {
		f.step(b)
		b.stepped = true
	}
	n := depthOf(t.Topic)
	bids, asks := top(b.bids, -1, n), top(b.asks, +1, n)
	db, da := diff(v.bids, bids, b.bids), diff(v.asks, asks, b.asks)
	v.bids, v.asks = bids, asks
	return f.bookData(t.Instrument, b, levelsOf(db, b.pair, -1), levelsOf(da, b.pair, +1))
}

// top is the best n levels of a side (sign -1 bids, +1 asks).
func top(side map[int64]int64, sign int64, n int) map[int64]int64 {
	prices := sortedPrices(side, sign)
	out := make(map[int64]int64, n)
	for _, p := range prices[:min(n, len(prices))] {
		out[p] = side[p]
	}
	return out
}

// sortedPrices are a side's prices best first.
func sortedPrices(side map[int64]int64, sign int64) []int64 {
	prices := slices.Sorted(maps.Keys(side))
	if sign < 0 {
		slices.Reverse(prices)
	}
	return prices
}

// diff is what a depth's subscribers need to go from old to now: levels
// new or changed, and qty 0 for a level gone from the whole book (one
// pushed beyond the depth gets nothing: the subscriber truncates).
func diff(old, now, whole map[int64]int64) map[int64]int64 {
	out := make(map[int64]int64)
	for p, q := range now {
		if old[p] != q {
			out[p] = q
		}
	}
	for p := range old {
		if _, ok := whole[p]; !ok {
			out[p] = 0
		}
	}
	return out
}

// level is a price and qty as Kraken writes them.
type level struct{ price, qty string }

// levelsOf writes a side's levels best first at the pair's precision.
func levelsOf(side map[int64]int64, p pair, sign int64) []level {
	var out []level
	for _, price := range sortedPrices(side, sign) {
		out = append(out, level{fixed(price, p.pricePrec), fixed(side[price], p.qtyPrec)})
	}
	return out
}

// fixed writes units of 10^-prec with prec fractional digits.
func fixed(units int64, prec int) string {
	s := strconv.FormatInt(units, 10)
	if prec == 0 {
		return s
	}
	for len(s) <= prec {
		s = "0" + s
	}
	return s[:len(s)-prec] + "." + s[len(s)-prec:]
}

// checksum is the CRC32 of b's ten best levels a side, asks first.
func (b *pairBook) checksum() uint32 {
	var text []byte
	for _, s := range []struct {
		side map[int64]int64
		sign int64
	}{{b.asks, +1}, {b.bids, -1}} {
		prices := sortedPrices(s.side, s.sign)
		for _, p := range prices[:min(checksumLevels, len(prices))] {
			text = strconv.AppendInt(text, p, 10)
			text = strconv.AppendInt(text, s.side[p], 10)
		}
	}
	return crc32.ChecksumIEEE(text)
}

// bookData is a book message's data array: one item with the symbol,
// the levels as {"price":P,"qty":Q} (numbers at the pair's precision),
// the checksum of the whole book and the timestamp.
func (f *feed) bookData(symbol string, b *pairBook, bids, asks []level) []byte {
	dst := append([]byte(`[{"symbol":`), strconv.Quote(symbol)...)
	dst = appendFeedLevels(append(dst, `,"bids":`...), bids)
	dst = appendFeedLevels(append(dst, `,"asks":`...), asks)
	dst = strconv.AppendUint(append(dst, `,"checksum":`...), uint64(b.checksum()), 10)
	return append(append(append(dst, `,"timestamp":"`...), stamp(f.now)...), `"}]`...)
}

func appendFeedLevels(dst []byte, levels []level) []byte {
	dst = append(dst, '[')
	for i, l := range levels {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"price":`+l.price+`,"qty":`+l.qty+`}`...)
	}
	return append(dst, ']')
}

// ticker is a ticker message's data
// (https://docs.kraken.com/api/docs/websocket-v2/ticker).
func (f *feed) ticker(symbol string) []byte {
	b := f.book(symbol)
	bid, ask := sortedPrices(b.bids, -1)[0], sortedPrices(b.asks, +1)[0]
	p := b.pair
	px := func(t int64) string { return fixed(t, p.pricePrec) }
	dst := append([]byte(`[{"symbol":`), strconv.Quote(symbol)...)
	dst = append(dst, `,"bid":`+px(bid)+`,"bid_qty":`+fixed(b.bids[bid], p.qtyPrec)+
		`,"ask":`+px(ask)+`,"ask_qty":`+fixed(b.asks[ask], p.qtyPrec)+
		`,"last":`+px(bid)+`,"volume":`+fixed(f.lots()*1000, p.qtyPrec)+
		`,"vwap":`+px(p.center)+`,"low":`+px(p.center*98/100)+`,"high":`+px(p.center*102/100)+
		`,"change":`+px(p.center/100)+`,"change_pct":1.0}]`...)
	return dst
}

// tradeData is a trade message's data: one trade
// (https://docs.kraken.com/api/docs/websocket-v2/trade).
func (f *feed) tradeData(symbol string) []byte {
	b := f.book(symbol)
	f.trade += 1 + f.rng.Int64N(3)
	side, price := "buy", sortedPrices(b.asks, +1)[0]
	if f.rng.IntN(2) == 0 {
		side, price = "sell", sortedPrices(b.bids, -1)[0]
	}
	dst := append([]byte(`[{"symbol":`), strconv.Quote(symbol)...)
	dst = append(dst, `,"side":"`+side+`","price":`+fixed(price, b.pair.pricePrec)+
		`,"qty":`+fixed(f.lots(), b.pair.qtyPrec)+`,"ord_type":"market","trade_id":`+
		strconv.FormatInt(f.trade, 10)+`,"timestamp":"`+stamp(f.now)+`"}]`...)
	return dst
}

// CrossBook makes the book's next step add a bid at the best ask,
// crossing it, and the step after take it away again.
func (f *feed) CrossBook(t venue.FeedTopic) { f.book(t.Instrument).crossNext = true }

// feed keeps its books whole: a new subscriber gets a snapshot first.
var _ venue.StatefulSimulation = (*feed)(nil)
