package ethereal

import (
	"strconv"
	"time"

	"github.com/wsfan/wsfan/pkg/protocol"
)

// exchange is how Ethereal's servers behave beyond the wire format, for
// test servers and the sidecar's demo: no requests, so no refusals, login
// or methods; a feed of prices and books.
var exchange = &protocol.Exchange{
	Feed: func(seed uint64) protocol.Feed {
		return &feed{m: protocol.NewMarket(seed), lastT: make(map[string]int64)}
	},
}

// feed makes up Ethereal's MarketPrice and L2Book streams; a book update
// names the time of the one before it (pt).
type feed struct {
	m     *protocol.Market
	lastT map[string]int64 // symbol → the previous book time (ms)
}

func (*feed) Instruments() []string { return []string{"BTCUSD", "ETHUSD"} }

// Topics are MarketPrice:<SYM> and L2Book:<SYM>.
func (*feed) Topics(symbols []string) []protocol.FeedTopic {
	var out []protocol.FeedTopic
	for _, sym := range symbols {
		out = append(out,
			protocol.FeedTopic{Topic: "MarketPrice:" + sym, Instrument: sym, Kind: protocol.FeedTicker},
			protocol.FeedTopic{Topic: "L2Book:" + sym, Instrument: sym, Kind: protocol.FeedBook})
	}
	return out
}

func (f *feed) Advance(now time.Time) { f.m.Advance(now) }

func (f *feed) Payload(t protocol.FeedTopic) []byte {
	m, sym := f.m, t.Instrument
	in := m.Instrument(sym)
	if t.Kind != protocol.FeedBook {
		return protocol.MarshalPayload(price{Symbol: sym, Time: m.Now().UnixMilli(),
			MarkPrice: in.Decimal(in.Mid), OraclePrice: in.Decimal(in.Mid * 0.9998)})
	}
	now := max(m.Now().UnixMilli(), f.lastT[sym]+1)
	b := book{Symbol: sym, Time: now, PrevTime: f.lastT[sym]}
	f.lastT[sym] = now
	side := func(levels [][2]float64) [][2]string {
		out := make([][2]string, len(levels))
		for i, l := range levels {
			out[i] = [2]string{in.Decimal(l[0]), strconv.FormatFloat(l[1], 'f', -1, 64)}
		}
		return out
	}
	b.Asks = side(m.Levels(in, 10, +1))
	b.Bids = side(m.Levels(in, 10, -1))
	return protocol.MarshalPayload(b)
}

// price is a MarketPrice event's data.
type price struct {
	Symbol      string `json:"s"`
	Time        int64  `json:"t"`
	MarkPrice   string `json:"markPrice"`
	OraclePrice string `json:"oraclePrice"`
}

// book is an L2Book event's data.
type book struct {
	Symbol   string      `json:"s"`
	Time     int64       `json:"t"`
	PrevTime int64       `json:"pt"`
	Asks     [][2]string `json:"a"`
	Bids     [][2]string `json:"b"`
}
