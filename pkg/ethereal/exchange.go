package ethereal

import (
	"strconv"
	"strings"
	"time"

	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/venue"
)

// exchange is how Ethereal's servers behave beyond the wire format, for
// test servers and the sidecar's demo: no requests, so no login or
// methods; a refusal past the per-connection subscription limit; a feed of
// prices and books.
//
// The refusal is the frame Ethereal's WebSocket page documents,
// {ok: false, code: "SUBSCRIPTION_LIMIT_EXCEEDED"}
// (https://docs.ethereal.trade/developer-guides/trading-api/websockets),
// and the same page says what the limit counts (countsTowardLimit).
var exchange = &venue.Exchange{
	TopicLimit: &protocol.Error{Code: -32000, Message: SubscriptionLimitExceeded},
	// A subscribe over the WebSocket budget (exchangetest.WithRateLimit:
	// Ethereal charges connecting and subscribing).
	Throttled:    &protocol.Error{Code: -32000, Message: RateLimitIP},
	LimitedTopic: countsTowardLimit,
	Feed: func(seed uint64) venue.Simulation {
		return &feed{m: venue.NewMarket(seed), lastT: make(map[string]int64), changes: make(map[string]int)}
	},
}

// countsTowardLimit reports whether topic counts toward Ethereal's
// per-connection subscription limit: only the account streams, keyed by
// subaccount, do
// (https://docs.ethereal.trade/developer-guides/trading-api/websockets:
// each (subaccountId, streamType) pair counts once; the market-data
// channels, L2Book, Ticker and TradeFill, not at all). A topic
// TYPE:SUBACCOUNT_ID names its pair one way only, so the same pair
// subscribed twice is one topic, counted once.
func countsTowardLimit(topic string) bool {
	typ, id, ok := strings.Cut(topic, ":")
	return ok && id != "" && subaccountTypes[typ]
}

// feed makes up Ethereal's Ticker and L2Book streams; a book update
// names the time of the one before it (pt).
type feed struct {
	m       *venue.Market
	lastT   map[string]int64 // symbol → the previous book time (ms)
	changes map[string]int   // symbol → the book changes sent
}

// unchainedEvery is how often a book change comes without pt: the
// documentation makes it optional (L2Book, "pt … optional"), so the test
// feed leaves it out of every fourth change, as a venue may.
const unchainedEvery = 4

func (*feed) Instruments() []string { return []string{"BTCUSD", "ETHUSD"} }

// Topics are Ticker:<SYM> and L2Book:<SYM>. Ticker is the price stream
// of Ethereal's WebSocket v2
// (https://docs.ethereal.trade/developer-guides/trading-api/websockets,
// TICKER: emitted once every second, event name "Ticker"); MarketPrice
// is the name of the deprecated Socket.io stream it replaces, which v2
// does not list.
func (*feed) Topics(symbols []string) []venue.FeedTopic {
	var out []venue.FeedTopic
	for _, sym := range symbols {
		out = append(out,
			venue.FeedTopic{Topic: "Ticker:" + sym, Instrument: sym, Kind: venue.FeedTicker},
			venue.FeedTopic{Topic: "L2Book:" + sym, Instrument: sym, Kind: venue.FeedBook})
	}
	return out
}

func (f *feed) Advance(now time.Time) { f.m.Advance(now) }

func (f *feed) Payload(t venue.FeedTopic) []byte {
	m, sym := f.m, t.Instrument
	in := m.Instrument(sym)
	if t.Kind != venue.FeedBook {
		return venue.MarshalPayload(price{Symbol: sym, Time: m.Now().UnixMilli(),
			MarkPrice: in.Decimal(in.Mid), OraclePrice: in.Decimal(in.Mid * 0.9998)})
	}
	bids, asks := m.Book(sym, bookDepth).Step()
	now := max(m.Now().UnixMilli(), f.lastT[sym]+1)
	prev := f.lastT[sym]
	f.lastT[sym] = now
	if f.changes[sym]++; f.changes[sym]%unchainedEvery == 0 {
		prev = 0 // no pt
	}
	return f.l2Book(sym, now, prev, venue.PriceSizes(bids), venue.PriceSizes(asks))
}

// bookDepth is the levels a side of a made-up L2Book.
const bookDepth = 20

// CrossBook makes the book's next change cross it.
func (f *feed) CrossBook(t venue.FeedTopic) { f.m.Book(t.Instrument, bookDepth).CrossNext() }

// Snapshot is the whole L2Book, which Ethereal sends a subscriber first,
// at the t of the last change, so the next change's pt follows it for
// every subscriber alike.
func (f *feed) Snapshot(t venue.FeedTopic) []byte {
	sym := t.Instrument
	b := f.m.Book(sym, bookDepth)
	if f.lastT[sym] == 0 {
		f.lastT[sym] = f.m.Now().UnixMilli()
	}
	return f.l2Book(sym, f.lastT[sym], f.lastT[sym]-1, b.Levels(-1), b.Levels(+1))
}

// l2Book is an L2Book's data with the levels [price, quantity] (0: the
// level is gone) at time t, following the message at pt.
func (f *feed) l2Book(sym string, t, pt int64, bids, asks [][2]float64) []byte {
	in := f.m.Instrument(sym)
	b := l2Book{Symbol: sym, Time: t, PrevTime: pt}
	side := func(levels [][2]float64) [][2]string {
		out := make([][2]string, len(levels))
		for i, l := range levels {
			out[i] = [2]string{in.Decimal(l[0]), strconv.FormatFloat(l[1], 'f', -1, 64)}
		}
		return out
	}
	b.Asks, b.Bids = side(asks), side(bids)
	return venue.MarshalPayload(b)
}

// price is a Ticker event's data. Of a Ticker frame the documentation
// (https://docs.ethereal.trade/developer-guides/trading-api/websockets,
// TICKER) gives e, the event name "Ticker", and t, the time the server
// emitted the message (ms), which the server half writes around the
// data; the rest of its field list was cut off in every copy we could
// read. The data's fields are therefore modelled, not documented: s, the
// symbol a notification routes by, as every other market stream of the
// page carries it; t, the price's time; markPrice and oraclePrice, the
// prices the deprecated MarketPrice stream carried.
type price struct {
	Symbol      string `json:"s"`
	Time        int64  `json:"t"`
	MarkPrice   string `json:"markPrice"`
	OraclePrice string `json:"oraclePrice"`
}

// l2Book is an L2Book event's data.
type l2Book struct {
	Symbol   string      `json:"s"`
	Time     int64       `json:"t"`
	PrevTime int64       `json:"pt,omitempty"` // 0: none (optional)
	Asks     [][2]string `json:"a"`
	Bids     [][2]string `json:"b"`
}

// feed keeps its books whole: a new subscriber gets a snapshot first.
var _ venue.StatefulSimulation = (*feed)(nil)
