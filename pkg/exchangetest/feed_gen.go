package exchangetest

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

// feedGen makes the feed's payloads: a random walk per instrument from a
// fixed seed. It is owned by the feed goroutine.
type feedGen struct {
	d     Dialect
	rng   *rand.Rand
	insts map[string]*instState
	now   time.Time

	// Ethereum chain state.
	block      uint64
	parentHash string
	baseFee    uint64
}

// instState is one instrument's market.
type instState struct {
	mid      float64
	tick     float64 // price increment
	changeID int64   // Deribit book sequence
	sent     bool    // Deribit: the snapshot was sent
	lastT    int64   // Ethereal: the previous book time (ms)
	volume   float64
	oi       float64
}

func newFeedGen(d Dialect) *feedGen {
	return &feedGen{
		d:          d,
		rng:        rand.New(rand.NewPCG(0x5eed, 0x5eed)),
		insts:      make(map[string]*instState),
		block:      19_000_000,
		parentHash: "0x" + strings.Repeat("ab", 32),
		baseFee:    12_000_000_000,
	}
}

// tick advances time and every instrument's price.
func (g *feedGen) tick() {
	g.now = time.Now()
	for _, st := range g.insts {
		st.mid = math.Max(st.tick, st.mid*(1+g.rng.NormFloat64()*0.0002))
	}
}

func (g *feedGen) inst(name string) *instState {
	st := g.insts[name]
	if st == nil {
		mid, tick := 100.0, 0.01
		switch {
		case strings.HasPrefix(name, "BTC"):
			mid, tick = 65000, 0.5
		case strings.HasPrefix(name, "ETH"):
			mid, tick = 3200, 0.05
		case strings.HasPrefix(name, "SOL"):
			mid, tick = 150, 0.01
		}
		st = &instState{
			mid:      mid,
			tick:     tick,
			changeID: 31_479_339_000 + g.rng.Int64N(1000),
			volume:   mid * 1000,
			oi:       mid * 500,
		}
		g.insts[name] = st
	}
	return st
}

// round rounds p to the instrument's tick; the second rounding drops the
// binary noise of the multiplication, so 3199.95 prints as 3199.95.
func (st *instState) round(p float64) float64 {
	return math.Round(math.Round(p/st.tick)*st.tick*1e8) / 1e8
}

func (g *feedGen) payload(ft feedTopic) []byte {
	var v any
	switch ft.kind {
	case kindHeads:
		v = g.head()
	case kindTicker:
		switch g.d {
		case Thalex:
			v = g.thalexTicker(ft.inst)
		case Deribit:
			v = g.deribitTicker(ft.inst)
		default:
			v = g.etherealPrice(ft.inst)
		}
	case kindBook:
		switch g.d {
		case Thalex:
			v = g.thalexBook(ft.inst)
		case Deribit:
			v = g.deribitBook(ft.inst)
		default:
			v = g.etherealBook(ft.inst)
		}
	}
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("exchangetest: feed payload: %v", err)) // our own types always marshal
	}
	return b
}

func (g *feedGen) amount() float64 {
	return math.Round((0.1+g.rng.Float64()*5)*1000) / 1000
}

// levels returns n price levels from the best price outwards.
func (g *feedGen) levels(st *instState, n int, side float64) [][2]float64 {
	out := make([][2]float64, n)
	for i := range out {
		out[i] = [2]float64{st.round(st.mid + side*float64(i+1)*st.tick), g.amount()}
	}
	return out
}

type thalexTicker struct {
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

func (g *feedGen) thalexTicker(inst string) thalexTicker {
	st := g.inst(inst)
	st.volume += g.amount()
	return thalexTicker{
		BestBidPrice:  st.round(st.mid - st.tick),
		BestBidAmount: g.amount(),
		BestAskPrice:  st.round(st.mid + st.tick),
		BestAskAmount: g.amount(),
		MarkPrice:     st.round(st.mid),
		MarkTimestamp: float64(g.now.UnixMicro()) / 1e6,
		Index:         st.round(st.mid * 0.9998),
		FundingRate:   math.Round(g.rng.NormFloat64()*1e6) / 1e10,
		Volume24h:     math.Round(st.volume),
		OpenInterest:  math.Round(st.oi),
	}
}

type thalexBook struct {
	Bids [][2]float64 `json:"bids"`
	Asks [][2]float64 `json:"asks"`
	Time float64      `json:"time"`
}

func (g *feedGen) thalexBook(inst string) thalexBook {
	st := g.inst(inst)
	return thalexBook{
		Bids: g.levels(st, 10, -1),
		Asks: g.levels(st, 10, +1),
		Time: float64(g.now.UnixMicro()) / 1e6,
	}
}

type deribitTicker struct {
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

func (g *feedGen) deribitTicker(inst string) deribitTicker {
	st := g.inst(inst)
	return deribitTicker{
		Timestamp:      g.now.UnixMilli(),
		InstrumentName: inst,
		State:          "open",
		BestBidPrice:   st.round(st.mid - st.tick),
		BestBidAmount:  g.amount() * 1000,
		BestAskPrice:   st.round(st.mid + st.tick),
		BestAskAmount:  g.amount() * 1000,
		LastPrice:      st.round(st.mid),
		MarkPrice:      st.round(st.mid),
		IndexPrice:     st.round(st.mid * 0.9998),
		OpenInterest:   math.Round(st.oi),
		CurrentFunding: math.Round(g.rng.NormFloat64()*1e6) / 1e10,
		Funding8h:      math.Round(g.rng.NormFloat64()*1e6) / 1e10,
	}
}

// deribitBook is a book notification; PrevChangeID is absent in snapshots.
type deribitBook struct {
	Type           string  `json:"type"`
	Timestamp      int64   `json:"timestamp"`
	PrevChangeID   int64   `json:"prev_change_id,omitempty"`
	InstrumentName string  `json:"instrument_name"`
	ChangeID       int64   `json:"change_id"`
	Bids           [][]any `json:"bids"`
	Asks           [][]any `json:"asks"`
}

func (g *feedGen) deribitBook(inst string) deribitBook {
	st := g.inst(inst)
	b := deribitBook{
		Type:           "change",
		Timestamp:      g.now.UnixMilli(),
		PrevChangeID:   st.changeID,
		InstrumentName: inst,
	}
	st.changeID += 1 + g.rng.Int64N(300)
	b.ChangeID = st.changeID
	n := 1 + g.rng.IntN(3)
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
	b.Bids = side(g.levels(st, n, -1))
	b.Asks = side(g.levels(st, n, +1))
	return b
}

type etherealPrice struct {
	Symbol      string `json:"s"`
	Time        int64  `json:"t"`
	MarkPrice   string `json:"markPrice"`
	OraclePrice string `json:"oraclePrice"`
}

func (g *feedGen) etherealPrice(sym string) etherealPrice {
	st := g.inst(sym)
	return etherealPrice{
		Symbol:      sym,
		Time:        g.now.UnixMilli(),
		MarkPrice:   g.decimal(st, st.mid),
		OraclePrice: g.decimal(st, st.mid*0.9998),
	}
}

type etherealBook struct {
	Symbol   string      `json:"s"`
	Time     int64       `json:"t"`
	PrevTime int64       `json:"pt"`
	Asks     [][2]string `json:"a"`
	Bids     [][2]string `json:"b"`
}

func (g *feedGen) etherealBook(sym string) etherealBook {
	st := g.inst(sym)
	t := max(g.now.UnixMilli(), st.lastT+1)
	b := etherealBook{Symbol: sym, Time: t, PrevTime: st.lastT}
	st.lastT = t
	side := func(levels [][2]float64) [][2]string {
		out := make([][2]string, len(levels))
		for i, l := range levels {
			out[i] = [2]string{g.decimal(st, l[0]), strconv.FormatFloat(l[1], 'f', -1, 64)}
		}
		return out
	}
	b.Asks = side(g.levels(st, 10, +1))
	b.Bids = side(g.levels(st, 10, -1))
	return b
}

func (g *feedGen) decimal(st *instState, p float64) string {
	return strconv.FormatFloat(st.round(p), 'f', -1, 64)
}

type ethHead struct {
	Number        string `json:"number"`
	Hash          string `json:"hash"`
	ParentHash    string `json:"parentHash"`
	Miner         string `json:"miner"`
	StateRoot     string `json:"stateRoot"`
	Timestamp     string `json:"timestamp"`
	GasLimit      string `json:"gasLimit"`
	GasUsed       string `json:"gasUsed"`
	BaseFeePerGas string `json:"baseFeePerGas"`
	Difficulty    string `json:"difficulty"`
	Nonce         string `json:"nonce"`
}

func (g *feedGen) head() ethHead {
	g.block++
	h := ethHead{
		Number:        hexU64(g.block),
		Hash:          g.hash32(),
		ParentHash:    g.parentHash,
		Miner:         "0x95222290dd7278aa3ddd389cc1e1d165cc4bafe5",
		StateRoot:     g.hash32(),
		Timestamp:     hexU64(uint64(g.now.Unix())),
		GasLimit:      hexU64(30_000_000),
		GasUsed:       hexU64(10_000_000 + g.rng.Uint64N(20_000_000)),
		BaseFeePerGas: hexU64(g.baseFee),
		Difficulty:    "0x0",
		Nonce:         "0x0000000000000000",
	}
	g.parentHash = h.Hash
	g.baseFee = uint64(float64(g.baseFee) * (0.9 + g.rng.Float64()*0.2))
	return h
}

func (g *feedGen) hash32() string {
	return fmt.Sprintf("0x%016x%016x%016x%016x", g.rng.Uint64(), g.rng.Uint64(), g.rng.Uint64(), g.rng.Uint64())
}

func hexU64(v uint64) string { return "0x" + strconv.FormatUint(v, 16) }
