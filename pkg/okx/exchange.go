package okx

import (
	"strconv"
	"time"

	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/venue"
)

// exchange is how OKX's public and private WebSocket services behave
// beyond the wire format, for test servers and the sidecar's demo: the
// refusal of requests over the per-connection budget (60014), of unknown
// arguments and of a channel on another service's URL (60018, "Wrong URL
// or {0} doesn't exist", naming the argument) and of private channels on
// a connection not logged in (60011), all from OKX's error table
// (https://www.okx.com/docs-v5/en/#error-code-websocket-public); its login
// (ServerLogin, op "login"); and a feed of tickers, trades and books
// sent as OKX sends them today.
var exchange = &venue.Exchange{
	Throttled:      &protocol.Error{Code: CodeTooFrequent, Message: "Requests too frequent."},
	RequestLimit:   &serverRequestLimit,
	UnknownTopic:   &protocol.Error{Code: CodeNoSuchChannel, Message: noSuchChannel},
	LoginRequired:  &protocol.Error{Code: CodePleaseLogIn, Message: "Please log in."},
	ServedOn:       servedOn,
	Login:          func() venue.Authenticator { return NewServerLogin("", "", "") },
	SessionMethods: []string{"login"},
	Feed:           func(seed uint64) venue.Simulation { return newFeed(seed) },
}

// serverRequestLimit is the servers' budget: "The total number of
// 'subscribe'/'unsubscribe'/'login' requests per connection is limited to
// 480 times per hour"
// (https://www.okx.com/docs-v5/en/#overview-websocket-connect), as a
// bucket of 480 refilled at 480 an hour; what OKX answers past it is not
// documented, and the test exchange answers 60014 "Requests too
// frequent", the error table's code for it.
var serverRequestLimit = protocol.Limit{Rate: 480.0 / 3600, Burst: 480, Cost: requestCost}

// feed makes up OKX's tickers, trades and books channels: a new
// subscriber of a book gets its snapshot (prevSeqId -1), then every
// subscriber the same updates, each naming the seqId before it. Every
// push carries checksum 0: OKX stopped filling the field ("Checksum
// (Deprecated) … its value is fixed to 0 and must no longer be used for
// integrity verification",
// https://www.okx.com/docs-v5/en/#order-book-trading-market-data-ws-order-book-channel).
type feed struct {
	m       *venue.Market
	seqIDs  map[string]int64 // an instrument's book's last seqId
	tradeID map[string]int64 // an instrument's last tradeId
}

// bookDepth is the levels a side of a made-up book.
const bookDepth = 20

func newFeed(seed uint64) *feed {
	return &feed{m: venue.NewMarket(seed), seqIDs: make(map[string]int64), tradeID: make(map[string]int64)}
}

func (*feed) Instruments() []string { return []string{"BTC-USDT", "ETH-USDT"} }

// Topics are tickers:<INST>, trades:<INST> and books:<INST>.
func (*feed) Topics(instruments []string) []venue.FeedTopic {
	var out []venue.FeedTopic
	for _, inst := range instruments {
		out = append(out,
			venue.FeedTopic{Topic: "tickers:" + inst, Instrument: inst, Kind: venue.FeedTicker},
			venue.FeedTopic{Topic: "trades:" + inst, Instrument: inst, Kind: venue.FeedOther},
			venue.FeedTopic{Topic: "books:" + inst, Instrument: inst, Kind: venue.FeedBook})
	}
	return out
}

func (f *feed) Advance(now time.Time) { f.m.Advance(now) }

// Payload is a push's data array.
func (f *feed) Payload(t venue.FeedTopic) []byte {
	switch t.Kind {
	case venue.FeedBook:
		return f.update(t.Instrument)
	case venue.FeedTicker:
		return f.ticker(t.Instrument)
	}
	return f.trade(t.Instrument)
}

// ms is a millisecond timestamp as OKX writes it: a string.
func ms(t time.Time) string { return strconv.FormatInt(t.UnixMilli(), 10) }

// ticker is a tickers push's data
// (https://www.okx.com/docs-v5/en/#order-book-trading-market-data-ws-tickers-channel).
func (f *feed) ticker(inst string) []byte {
	m, in := f.m, f.m.Instrument(inst)
	px := func(p float64) string { return in.Decimal(p) }
	sz := func() string { return strconv.FormatFloat(m.Amount(), 'f', 4, 64) }
	return venue.MarshalPayload([]map[string]string{{
		"instType": "SPOT", "instId": inst, "last": px(in.Mid), "lastSz": sz(),
		"askPx": px(in.Mid + in.Tick), "askSz": sz(), "bidPx": px(in.Mid - in.Tick), "bidSz": sz(),
		"open24h": px(in.Mid * 0.99), "high24h": px(in.Mid * 1.01), "low24h": px(in.Mid * 0.98),
		"volCcy24h": strconv.FormatFloat(in.Volume*in.Mid, 'f', 2, 64), "vol24h": strconv.FormatFloat(in.Volume, 'f', 4, 64),
		"sodUtc0": px(in.Mid * 0.995), "sodUtc8": px(in.Mid * 0.996), "ts": ms(m.Now()),
	}})
}

// trade is a trades push's data: one aggregated trade, its tradeId the
// last of the count it aggregates
// (https://www.okx.com/docs-v5/en/#order-book-trading-market-data-ws-trades-channel).
func (f *feed) trade(inst string) []byte {
	m, in := f.m, f.m.Instrument(inst)
	count := 1 + m.Rand().Int64N(3)
	id := f.tradeID[inst]
	if id == 0 {
		id = 130_639_000 + m.Rand().Int64N(1000)
	}
	id += count
	f.tradeID[inst] = id
	side := "buy"
	if m.Rand().IntN(2) == 0 {
		side = "sell"
	}
	return venue.MarshalPayload([]map[string]any{{
		"instId": inst, "tradeId": strconv.FormatInt(id, 10), "px": in.Decimal(in.Mid),
		"sz": strconv.FormatFloat(m.Amount(), 'f', 8, 64), "side": side, "ts": ms(m.Now()),
		"count": strconv.FormatInt(count, 10), "source": "0", "seqId": f.seqID(inst),
	}})
}

// seqID is the instrument's book's last seqId, made up on first use.
func (f *feed) seqID(inst string) int64 {
	id, ok := f.seqIDs[inst]
	if !ok {
		id = 123_456 + f.m.Rand().Int64N(1000)
		f.seqIDs[inst] = id
	}
	return id
}

// CrossBook makes the book's next change cross it.
func (f *feed) CrossBook(t venue.FeedTopic) { f.m.Book(t.Instrument, bookDepth).CrossNext() }

// Snapshot is the whole book OKX sends first: action "snapshot" (the
// server half's SnapshotEnvelope), prevSeqId -1, at the last seqId.
func (f *feed) Snapshot(t venue.FeedTopic) []byte {
	b := f.m.Book(t.Instrument, bookDepth)
	return f.bookData(t.Instrument, b.Levels(-1), b.Levels(+1), -1, f.seqID(t.Instrument))
}

// update is the book's next change: its levels with absolute sizes (0
// removes one), prevSeqId the last seqId; seqIds grow by irregular steps,
// as OKX's do.
func (f *feed) update(inst string) []byte {
	prev := f.seqID(inst)
	id := prev + 1 + f.m.Rand().Int64N(20)
	f.seqIDs[inst] = id
	bids, asks := f.m.Book(inst, bookDepth).Step()
	return f.bookData(inst, venue.PriceSizes(bids), venue.PriceSizes(asks), prev, id)
}

// bookData is a book push's data: one item with the levels
// [price, size, "0", orders] (the third "is part of a deprecated feature
// and it is always 0"), ts, checksum 0, prevSeqId and seqId.
func (f *feed) bookData(inst string, bids, asks [][2]float64, prev, seq int64) []byte {
	in := f.m.Instrument(inst)
	side := func(levels [][2]float64) [][4]string {
		out := make([][4]string, len(levels))
		for i, l := range levels {
			orders := "0"
			if l[1] > 0 {
				orders = strconv.Itoa(1 + int(l[1])%7)
			}
			out[i] = [4]string{in.Decimal(l[0]), strconv.FormatFloat(l[1], 'f', -1, 64), "0", orders}
		}
		return out
	}
	return venue.MarshalPayload([]bookItem{{Asks: side(asks), Bids: side(bids), TS: ms(f.m.Now()), PrevSeqID: prev, SeqID: seq}})
}

// bookItem is a book push's data item.
type bookItem struct {
	Asks      [][4]string `json:"asks"`
	Bids      [][4]string `json:"bids"`
	TS        string      `json:"ts"`
	Checksum  int64       `json:"checksum"`
	PrevSeqID int64       `json:"prevSeqId"`
	SeqID     int64       `json:"seqId"`
}

// feed keeps its books whole: a new subscriber gets a snapshot first.
var _ venue.StatefulSimulation = (*feed)(nil)
