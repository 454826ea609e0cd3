package deribit

import (
	"math"
	"time"

	"github.com/wsfan/wsfan/pkg/venue"
)

// feed makes up Deribit's tickers and books: a new subscriber of a book
// gets its snapshot, then every subscriber the same changes, chained by
// prev_change_id.
type feed struct {
	m         *venue.Market
	changeIDs map[string]int64 // an instrument's last change_id
}

// bookDepth is the levels a side of a made-up book.
const bookDepth = 20

func newFeed(seed uint64) *feed {
	return &feed{m: venue.NewMarket(seed), changeIDs: make(map[string]int64)}
}

func (*feed) Instruments() []string { return []string{"BTC-PERPETUAL", "ETH-PERPETUAL"} }

// Topics are ticker.<INST>.100ms and book.<INST>.100ms.
func (*feed) Topics(instruments []string) []venue.FeedTopic {
	var out []venue.FeedTopic
	for _, inst := range instruments {
		out = append(out,
			venue.FeedTopic{Topic: "ticker." + inst + ".100ms", Instrument: inst, Kind: venue.FeedTicker},
			venue.FeedTopic{Topic: "book." + inst + ".100ms", Instrument: inst, Kind: venue.FeedBook})
	}
	return out
}

func (f *feed) Advance(now time.Time) { f.m.Advance(now) }

func (f *feed) Payload(t venue.FeedTopic) []byte {
	m, in := f.m, f.m.Instrument(t.Instrument)
	if t.Kind == venue.FeedBook {
		return venue.MarshalPayload(f.book(t.Instrument, in))
	}
	return venue.MarshalPayload(ticker{
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

// changeID is the instrument's last change_id, made up on first use.
func (f *feed) changeID(name string) int64 {
	id, ok := f.changeIDs[name]
	if !ok {
		id = 31_479_339_000 + f.m.Rand().Int64N(1000)
		f.changeIDs[name] = id
	}
	return id
}

// CrossBook makes the book's next change cross it.
func (f *feed) CrossBook(t venue.FeedTopic) { f.m.Book(t.Instrument, bookDepth).CrossNext() }

// Snapshot is the book as Deribit sends it after the acknowledgement:
// every level "new", at the last change_id.
func (f *feed) Snapshot(t venue.FeedTopic) []byte {
	b := f.m.Book(t.Instrument, bookDepth)
	levels := func(side float64) [][]any {
		var out [][]any
		for _, l := range b.Levels(side) {
			out = append(out, []any{"new", l[0], math.Round(l[1] * 1000)})
		}
		return out
	}
	return venue.MarshalPayload(bookMessage{Type: "snapshot", Timestamp: f.m.Now().UnixMilli(), InstrumentName: t.Instrument,
		ChangeID: f.changeID(t.Instrument), Bids: levels(-1), Asks: levels(+1)})
}

// book returns the instrument's next change: its levels "new",
// "change" or "delete" (amount 0), prev_change_id the last change_id.
func (f *feed) book(name string, _ *venue.Instrument) bookMessage {
	prev := f.changeID(name)
	id := prev + 1 + f.m.Rand().Int64N(300)
	f.changeIDs[name] = id
	bids, asks := f.m.Book(name, bookDepth).Step()
	levels := func(changes []venue.BookChange) [][]any {
		out := make([][]any, 0, len(changes))
		for _, c := range changes {
			action := "change"
			switch {
			case c.Size == 0:
				action = "delete"
			case c.New:
				action = "new"
			}
			out = append(out, []any{action, c.Price, math.Round(c.Size * 1000)})
		}
		return out
	}
	return bookMessage{Type: "change", Timestamp: f.m.Now().UnixMilli(), PrevChangeID: prev, InstrumentName: name,
		ChangeID: id, Bids: levels(bids), Asks: levels(asks)}
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

// bookMessage is a book notification; PrevChangeID is absent in
// snapshots.
type bookMessage struct {
	Type           string  `json:"type"`
	Timestamp      int64   `json:"timestamp"`
	PrevChangeID   int64   `json:"prev_change_id,omitempty"`
	InstrumentName string  `json:"instrument_name"`
	ChangeID       int64   `json:"change_id"`
	Bids           [][]any `json:"bids"`
	Asks           [][]any `json:"asks"`
}

// feed keeps its books whole: a new subscriber gets a snapshot first.
var _ venue.StatefulSimulation = (*feed)(nil)
