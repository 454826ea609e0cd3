package thalex

import (
	"math"
	"time"

	"github.com/wsfan/wsfan/pkg/protocol"
)

// feed makes up Thalex's tickers and books.
type feed struct{ m *protocol.Market }

func (*feed) Instruments() []string { return []string{"BTC-PERPETUAL", "ETH-PERPETUAL"} }

// Topics are ticker.<INST>.raw and book.<INST>.none.10.100ms.
func (*feed) Topics(instruments []string) []protocol.FeedTopic {
	var out []protocol.FeedTopic
	for _, inst := range instruments {
		out = append(out,
			protocol.FeedTopic{Topic: "ticker." + inst + ".raw", Instrument: inst, Kind: protocol.FeedTicker},
			protocol.FeedTopic{Topic: "book." + inst + ".none.10.100ms", Instrument: inst, Kind: protocol.FeedBook})
	}
	return out
}

func (f *feed) Advance(now time.Time) { f.m.Advance(now) }

func (f *feed) Payload(t protocol.FeedTopic) []byte {
	m, in := f.m, f.m.Instrument(t.Instrument)
	seconds := float64(m.Now().UnixMicro()) / 1e6
	if t.Kind == protocol.FeedBook {
		return protocol.MarshalPayload(book{Bids: m.Levels(in, 10, -1), Asks: m.Levels(in, 10, +1), Time: seconds})
	}
	in.Volume += m.Amount()
	return protocol.MarshalPayload(ticker{
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

// book is a book notification's payload: the top levels, whole.
type book struct {
	Bids [][2]float64 `json:"bids"`
	Asks [][2]float64 `json:"asks"`
	Time float64      `json:"time"`
}
