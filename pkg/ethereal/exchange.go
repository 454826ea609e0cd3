package ethereal

import (
	"strconv"
	"time"

	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/venue"
)

// exchange is how Ethereal's servers behave beyond the wire format, for
// test servers and the sidecar's demo: no requests, so no login or
// methods; a refusal past the per-connection subscription limit; a feed of
// prices and books.
var exchange = &venue.Exchange{
	TopicLimit: &protocol.Error{Code: -32000, Message: SubscriptionLimitExceeded},
	Feed: func(seed uint64) venue.Feed {
		return &feed{m: venue.NewMarket(seed), lastT: make(map[string]int64)}
	},
}

// feed makes up Ethereal's MarketPrice and L2Book streams; a book update
// names the time of the one before it (pt).
type feed struct {
	m     *venue.Market
	lastT map[string]int64 // symbol → the previous book time (ms)
}

func (*feed) Instruments() []string { return []string{"BTCUSD", "ETHUSD"} }

// Topics are MarketPrice:<SYM> and L2Book:<SYM>.
func (*feed) Topics(symbols []string) []venue.FeedTopic {
	var out []venue.FeedTopic
	for _, sym := range symbols {
		out = append(out,
			venue.FeedTopic{Topic: "MarketPrice:" + sym, Instrument: sym, Kind: venue.FeedTicker},
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

// price is a MarketPrice event's data.
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
	PrevTime int64       `json:"pt"`
	Asks     [][2]string `json:"a"`
	Bids     [][2]string `json:"b"`
}

// feed keeps its books whole: a new subscriber gets a snapshot first.
var _ venue.StatefulFeed = (*feed)(nil)
