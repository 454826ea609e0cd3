package venue

import (
	"maps"
	"math"
	"slices"
)

// MarketBook is a made-up order book of one instrument, kept whole so an
// exchange's feed can send a new subscriber its snapshot and then every
// subscriber the same changes, as the exchanges do. It stands around the
// instrument's price (the mid a ticker reports), holds depth levels a
// side around it, and is never crossed unless told to be (CrossNext). A feed
// uses it from one goroutine at a time.
type MarketBook struct {
	m      *Market
	in     *Instrument
	depth  int
	center float64             // the price between the sides, on the tick grid
	bids   map[float64]float64 // price → size
	asks   map[float64]float64

	crossNext bool    // the next step adds a bid at the best ask
	crossed   float64 // the crossing bid's price, removed by the step after
}

// Book returns the made-up book of instrument name, depth levels a side,
// made on first use.
func (m *Market) Book(name string, depth int) *MarketBook {
	if b := m.books[name]; b != nil {
		return b
	}
	in := m.Instrument(name)
	b := &MarketBook{m: m, in: in, depth: depth, center: in.Round(in.Mid),
		bids: make(map[float64]float64), asks: make(map[float64]float64)}
	b.fill(nil, nil)
	if m.books == nil {
		m.books = make(map[string]*MarketBook)
	}
	m.books[name] = b
	return b
}

// Levels returns one side of the book best first: side -1 for bids, +1
// for asks.
func (b *MarketBook) Levels(side float64) [][2]float64 {
	levels, prices := b.side(side), []float64{}
	for p := range levels {
		prices = append(prices, p)
	}
	slices.Sort(prices)
	if side < 0 {
		slices.Reverse(prices)
	}
	out := make([][2]float64, len(prices))
	for i, p := range prices {
		out[i] = [2]float64{p, levels[p]}
	}
	return out
}

func (b *MarketBook) side(side float64) map[float64]float64 {
	if side < 0 {
		return b.bids
	}
	return b.asks
}

// CrossNext makes the next Step add a bid at the best ask, crossing the
// book, and the step after it take the bid away again: what a test of a
// book's crossed-book check needs.
func (b *MarketBook) CrossNext() { b.crossNext = true }

// BookChange is one level a Step changed.
type BookChange struct {
	Price, Size float64 // Size 0: the level is gone
	New         bool    // the level was not in the book before the step
}

// PriceSizes are changes as [price, size] pairs (size 0: the level is
// gone), as most feeds write them.
func PriceSizes(changes []BookChange) [][2]float64 {
	out := make([][2]float64, len(changes))
	for i, c := range changes {
		out[i] = [2]float64{c.Price, c.Size}
	}
	return out
}

// Step moves the book on by one message and returns its changes, best
// first: levels whose size is new, and levels removed with size 0.
func (b *MarketBook) Step() (bids, asks []BookChange) {
	before := func(side map[float64]float64, changes [][2]float64) []BookChange {
		out := make([]BookChange, len(changes))
		for i, c := range changes {
			out[i] = BookChange{Price: c[0], Size: c[1], New: c[1] != 0 && side[c[0]] == 0}
		}
		return out
	}
	hadBids, hadAsks := maps.Clone(b.bids), maps.Clone(b.asks)
	rb, ra := b.step()
	return before(hadBids, rb), before(hadAsks, ra)
}

// step is Step's work: the changes as [price, size].
func (b *MarketBook) step() (bids, asks [][2]float64) {
	in := b.in
	if b.crossed != 0 {
		delete(b.bids, b.crossed)
		bids = append(bids, [2]float64{b.crossed, 0})
		b.crossed = 0
	}
	// The book stands around the instrument's mid, as its ticker does:
	// a book lagging behind the mid would disagree with the ticker.
	b.center = in.Round(in.Mid)
	// Levels the move left behind go; one or two levels a side change
	// size; the window is filled again.
	low, high := b.window(-1)
	for p := range b.bids {
		if p < low || p > high {
			delete(b.bids, p)
			bids = append(bids, [2]float64{p, 0})
		}
	}
	low, high = b.window(+1)
	for p := range b.asks {
		if p < low || p > high {
			delete(b.asks, p)
			asks = append(asks, [2]float64{p, 0})
		}
	}
	for range 1 + b.m.rng.IntN(2) {
		p := in.Round(b.center - float64(1+b.m.rng.IntN(b.depth))*in.Tick)
		b.bids[p] = b.m.Amount()
		bids = append(bids, [2]float64{p, b.bids[p]})
	}
	for range 1 + b.m.rng.IntN(2) {
		p := in.Round(b.center + float64(1+b.m.rng.IntN(b.depth))*in.Tick)
		b.asks[p] = b.m.Amount()
		asks = append(asks, [2]float64{p, b.asks[p]})
	}
	bids, asks = b.fill(bids, asks)
	if b.crossNext {
		b.crossNext = false
		best := b.Levels(+1)[0][0]
		b.bids[best], b.crossed = b.m.Amount(), best
		bids = append(bids, [2]float64{best, b.bids[best]})
	}
	return dedupe(bids, -1), dedupe(asks, +1)
}

// window is the range of prices a side holds around the center.
func (b *MarketBook) window(side float64) (low, high float64) {
	near := b.in.Round(b.center + side*b.in.Tick)
	far := b.in.Round(b.center + side*float64(b.depth)*b.in.Tick)
	return min(near, far), max(near, far)
}

// fill adds the levels missing from the window, appending them to the
// changes.
func (b *MarketBook) fill(bids, asks [][2]float64) ([][2]float64, [][2]float64) {
	for i := 1; i <= b.depth; i++ {
		if p := b.in.Round(b.center - float64(i)*b.in.Tick); b.bids[p] == 0 {
			b.bids[p] = b.m.Amount()
			bids = append(bids, [2]float64{p, b.bids[p]})
		}
		if p := b.in.Round(b.center + float64(i)*b.in.Tick); b.asks[p] == 0 {
			b.asks[p] = b.m.Amount()
			asks = append(asks, [2]float64{p, b.asks[p]})
		}
	}
	return bids, asks
}

// dedupe keeps each price's last change and sorts the changes best first.
func dedupe(changes [][2]float64, side float64) [][2]float64 {
	last := make(map[float64]float64, len(changes))
	for _, c := range changes {
		last[c[0]] = c[1]
	}
	out := changes[:0]
	for p, s := range last {
		out = append(out, [2]float64{p, s})
	}
	slices.SortFunc(out, func(a, b [2]float64) int { return int(math.Copysign(1, side)) * cmpFloat(a[0], b[0]) })
	return out
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
