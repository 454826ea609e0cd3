package venue

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

// Market is a made-up market for exchange feeds (Exchange.Feed): a random
// walk per instrument from a fixed seed, which each exchange's feed
// formats in its own shapes. It is used by one goroutine at a time.
type Market struct {
	rng   *rand.Rand
	insts map[string]*Instrument
	books map[string]*MarketBook // made by Book on first use
	now   time.Time
}

// Instrument is one instrument's made-up state.
type Instrument struct {
	Mid          float64 // the mid price the walk moves
	Tick         float64 // price increment
	Volume       float64
	OpenInterest float64
}

// NewMarket returns a market whose walk starts from seed.
func NewMarket(seed uint64) *Market {
	return &Market{rng: rand.New(rand.NewPCG(seed, seed)), insts: make(map[string]*Instrument), now: time.Now()}
}

// Advance moves time on to now and every instrument's price a step.
func (m *Market) Advance(now time.Time) {
	m.now = now
	for _, in := range m.insts {
		in.Mid = math.Max(in.Tick, in.Mid*(1+m.rng.NormFloat64()*0.0002))
	}
}

// Now is the market's time, as of the last Advance.
func (m *Market) Now() time.Time { return m.now }

// Rand is the market's random source, for the feeds' own made-up values.
func (m *Market) Rand() *rand.Rand { return m.rng }

// Instrument returns name's state, made on first use with a price
// around the real one for BTC, ETH and SOL.
func (m *Market) Instrument(name string) *Instrument {
	in := m.insts[name]
	if in == nil {
		mid, tick := 100.0, 0.01
		switch {
		case strings.HasPrefix(name, "BTC"):
			mid, tick = 65000, 0.5
		case strings.HasPrefix(name, "ETH"):
			mid, tick = 3200, 0.05
		case strings.HasPrefix(name, "SOL"):
			mid, tick = 150, 0.01
		}
		in = &Instrument{Mid: mid, Tick: tick, Volume: mid * 1000, OpenInterest: mid * 500}
		m.insts[name] = in
	}
	return in
}

// Amount is a made-up order size.
func (m *Market) Amount() float64 {
	return math.Round((0.1+m.rng.Float64()*5)*1000) / 1000
}

// Funding is a made-up funding rate.
func (m *Market) Funding() float64 {
	return math.Round(m.rng.NormFloat64()*1e6) / 1e10
}

// Levels returns n price levels of in from the best price outwards, with
// made-up sizes: side -1 for bids, +1 for asks.
func (m *Market) Levels(in *Instrument, n int, side float64) [][2]float64 {
	out := make([][2]float64, n)
	for i := range out {
		out[i] = [2]float64{in.Round(in.Mid + side*float64(i+1)*in.Tick), m.Amount()}
	}
	return out
}

// Round rounds p to the instrument's tick; the second rounding drops the
// binary noise of the multiplication, so 3199.95 prints as 3199.95.
func (in *Instrument) Round(p float64) float64 {
	return math.Round(math.Round(p/in.Tick)*in.Tick*1e8) / 1e8
}

// Decimal is p rounded to the tick, as a decimal string.
func (in *Instrument) Decimal(p float64) string {
	return strconv.FormatFloat(in.Round(p), 'f', -1, 64)
}

// MarshalPayload encodes a feed's payload. Feeds marshal their own types,
// which always encode.
func MarshalPayload(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("protocol: feed payload: %v", err))
	}
	return b
}
