package thalex

import (
	"math"
	"strconv"
	"time"

	"github.com/wsfan/wsfan/pkg/venue"
)

// feed makes up Thalex's tickers and books.
type feed struct{ m *venue.Market }

func (*feed) Instruments() []string { return []string{"BTC-PERPETUAL", "ETH-PERPETUAL"} }

// Topics are ticker.<INST>.raw and book.<INST>.none.10.100ms; the book
// topic is written by bookChannel, so that BookRules reads it back.
func (*feed) Topics(instruments []string) []venue.FeedTopic {
	var out []venue.FeedTopic
	for _, inst := range instruments {
		channel := bookChannel{Instrument: inst, Grouping: "none", Levels: strconv.Itoa(bookDepth), Delay: "100ms"}
		out = append(out,
			venue.FeedTopic{Topic: "ticker." + inst + ".raw", Instrument: inst, Kind: venue.FeedTicker},
			venue.FeedTopic{Topic: channel.String(), Instrument: inst, Kind: venue.FeedBook})
	}
	return out
}

func (f *feed) Advance(now time.Time) { f.m.Advance(now) }

func (f *feed) Payload(t venue.FeedTopic) []byte {
	m, in := f.m, f.m.Instrument(t.Instrument)
	seconds := float64(m.Now().UnixMicro()) / 1e6
	if t.Kind == venue.FeedBook {
		bids, asks := m.Book(t.Instrument, bookDepth).Step()
		return f.bookPayload(t.Instrument, venue.PriceSizes(bids), venue.PriceSizes(asks))
	}
	in.Volume += m.Amount()
	return venue.MarshalPayload(ticker{
		BestBidPrice:  in.Round(in.Mid - in.Tick),
		BestBidAmount: m.Amount(),
		BestAskPrice:  in.Round(in.Mid + in.Tick),
		BestAskAmount: m.Amount(),
		MarkPrice:     in.Round(in.Mid),
		MarkTimestamp: seconds,
		Index:         in.Round(in.Mid * 0.9998),
		FundingRate:   m.Funding(),
		Volume24h:     math.Round(in.Volume),
		OpenInterest:  math.Round(in.OpenInterest),
	})
}

// ticker is a ticker notification's payload.
type ticker struct {
	BestBidPrice  float64 `json:"best_bid_price"`
	BestBidAmount float64 `json:"best_bid_amount"`
	BestAskPrice  float64 `json:"best_ask_price"`
	BestAskAmount float64 `json:"best_ask_amount"`
	MarkPrice     float64 `json:"mark_price"`
	MarkTimestamp float64 `json:"mark_timestamp"`
	Index         float64 `json:"index"`
	FundingRate   float64 `json:"funding_rate"`
	Volume24h     float64 `json:"volume_24h"`
	OpenInterest  float64 `json:"open_interest"`
}

// bookDepth is the levels a side of a made-up book: the 10 of the
// topics' nlevels.
const bookDepth = 10

// CrossBook makes the book's next change cross it.
func (f *feed) CrossBook(t venue.FeedTopic) { f.m.Book(t.Instrument, bookDepth).CrossNext() }

// Snapshot is the whole book as Thalex sends it first: every level as a
// change, in a notification whose envelope says "snapshot": true.
func (f *feed) Snapshot(t venue.FeedTopic) []byte {
	b := f.m.Book(t.Instrument, bookDepth)
	return f.bookPayload(t.Instrument, b.Levels(-1), b.Levels(+1))
}

// bookPayload is a book notification carrying the levels [price, amount].
func (f *feed) bookPayload(instrument string, bids, asks [][2]float64) []byte {
	levels := func(ls [][2]float64) (out [][3]float64, total float64) {
		out = make([][3]float64, len(ls))
		for i, l := range ls {
			out[i] = [3]float64{l[0], l[1], l[1]} // nothing implied: all outright
			total += l[1]
		}
		return out, total
	}
	b := f.m.Book(instrument, bookDepth)
	n := bookNotification{Trades: [][]any{}, Time: float64(f.m.Now().UnixMicro()) / 1e6}
	n.BidChanges, _ = levels(bids)
	n.AskChanges, _ = levels(asks)
	_, n.TotalBidAmount = levels(b.Levels(-1))
	_, n.TotalAskAmount = levels(b.Levels(+1))
	n.TotalBidAmount = math.Round(n.TotalBidAmount*1000) / 1000
	n.TotalAskAmount = math.Round(n.TotalAskAmount*1000) / 1000
	return venue.MarshalPayload(n)
}

// bookNotification is a book notification's payload, as the API
// specification's book channel lays it out.
type bookNotification struct {
	Trades         [][]any      `json:"trades"`
	BidChanges     [][3]float64 `json:"bid_changes"`
	AskChanges     [][3]float64 `json:"ask_changes"`
	TotalBidAmount float64      `json:"total_bid_amount"`
	TotalAskAmount float64      `json:"total_ask_amount"`
	Time           float64      `json:"time"`
}

// feed keeps its books whole: a new subscriber gets a snapshot first.
var _ venue.StatefulSimulation = (*feed)(nil)
