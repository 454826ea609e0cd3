package deribit

import (
	"math"
	"time"

	"github.com/wsfan/wsfan/pkg/protocol"
)

// feed makes up Deribit's tickers and books: a book starts with a
// snapshot, then changes chained by prev_change_id.
type feed struct {
	m     *protocol.Market
	books map[string]*bookState
}

// bookState is an instrument's book sequence.
type bookState struct {
	changeID int64
	sent     bool // the snapshot was sent
}

func newFeed(seed uint64) *feed {
	return &feed{m: protocol.NewMarket(seed), books: make(map[string]*bookState)}
}

func (*feed) Instruments() []string { return []string{"BTC-PERPETUAL", "ETH-PERPETUAL"} }

// Topics are ticker.<INST>.100ms and book.<INST>.100ms.
func (*feed) Topics(instruments []string) []protocol.FeedTopic {
	var out []protocol.FeedTopic
	for _, inst := range instruments {
		out = append(out,
			protocol.FeedTopic{Topic: "ticker." + inst + ".100ms", Instrument: inst, Kind: protocol.FeedTicker},
			protocol.FeedTopic{Topic: "book." + inst + ".100ms", Instrument: inst, Kind: protocol.FeedBook})
	}
	return out
}

func (f *feed) Advance(now time.Time) { f.m.Advance(now) }

func (f *feed) Payload(t protocol.FeedTopic) []byte {
	m, in := f.m, f.m.Instrument(t.Instrument)
	if t.Kind == protocol.FeedBook {
		return protocol.MarshalPayload(f.book(t.Instrument, in))
	}
	return protocol.MarshalPayload(ticker{
		Timestamp:      m.Now().UnixMilli(),
		InstrumentName: t.Instrument,
		State:          "open",
		BestBidPrice:   in.Round(in.Mid - in.Tick),
		BestBidAmount:  m.Amount() * 1000,
		BestAskPrice:   in.Round(in.Mid + in.Tick),
		BestAskAmount:  m.Amount() * 1000,
		LastPrice:      in.Round(in.Mid),
		MarkPrice:      in.Round(in.Mid),
		IndexPrice:     in.Round(in.Mid * 0.9998),
		OpenInterest:   math.Round(in.OpenInterest),
		CurrentFunding: m.Funding(),
		Funding8h:      m.Funding(),
	})
}

// book returns the instrument's next book notification: the snapshot
// first, then a change of one to three levels a side.
func (f *feed) book(name string, in *protocol.Instrument) bookChange {
	m := f.m
	st := f.books[name]
	if st == nil {
		st = &bookState{changeID: 31_479_339_000 + m.Rand().Int64N(1000)}
		f.books[name] = st
	}
	b := bookChange{Type: "change", Timestamp: m.Now().UnixMilli(), PrevChangeID: st.changeID, InstrumentName: name}
	st.changeID += 1 + m.Rand().Int64N(300)
	b.ChangeID = st.changeID
	n := 1 + m.Rand().IntN(3)
	action := "change"
	if !st.sent {
		b.Type, b.PrevChangeID, n, action = "snapshot", 0, 10, "new"
		st.sent = true
	}
	side := func(levels [][2]float64) [][]any {
		out := make([][]any, len(levels))
		for i, l := range levels {
			out[i] = []any{action, l[0], l[1] * 1000}
		}
		return out
	}
	b.Bids = side(m.Levels(in, n, -1))
	b.Asks = side(m.Levels(in, n, +1))
	return b
}

// ticker is a ticker notification's payload.
type ticker struct {
	Timestamp      int64   `json:"timestamp"`
	InstrumentName string  `json:"instrument_name"`
	State          string  `json:"state"`
	BestBidPrice   float64 `json:"best_bid_price"`
	BestBidAmount  float64 `json:"best_bid_amount"`
	BestAskPrice   float64 `json:"best_ask_price"`
	BestAskAmount  float64 `json:"best_ask_amount"`
	LastPrice      float64 `json:"last_price"`
	MarkPrice      float64 `json:"mark_price"`
	IndexPrice     float64 `json:"index_price"`
	OpenInterest   float64 `json:"open_interest"`
	CurrentFunding float64 `json:"current_funding"`
	Funding8h      float64 `json:"funding_8h"`
}

// bookChange is a book notification; PrevChangeID is absent in snapshots.
type bookChange struct {
	Type           string  `json:"type"`
	Timestamp      int64   `json:"timestamp"`
	PrevChangeID   int64   `json:"prev_change_id,omitempty"`
	InstrumentName string  `json:"instrument_name"`
	ChangeID       int64   `json:"change_id"`
	Bids           [][]any `json:"bids"`
	Asks           [][]any `json:"asks"`
}
