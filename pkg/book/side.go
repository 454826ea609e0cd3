package book

// Level is one price level of a book.
type Level struct {
	Price Decimal // the level's price
	Size  Decimal // the amount at the price; 0 removes the level in an Update
	// Aux is the exchange's second amount at the level, where it has one
	// (Thalex's outright amount: the part not implied from other
	// instruments); zero elsewhere. A snapshot the sidecar rebuilds
	// carries it back.
	Aux Decimal
}

// side is one side of a book, its levels sorted best first: bids by
// price descending, asks ascending. Setting a level is a binary search
// and a move of the levels behind it; the slice grows to the deepest the
// book has been and is reused after, so steady state allocates nothing.
type side struct {
	levels []Level
	bids   bool // descending
}

// find returns where price is, or would be inserted, and whether it is
// there: the first level not better than price. The binary search is
// written out, one loop a side, so the 128-bit comparison is inlined.
func (s *side) find(price Decimal) (int, bool) {
	levels := s.levels
	lo, hi := 0, len(levels)
	if s.bids { // descending: a level is better when its price is higher
		for lo < hi {
			m := int(uint(lo+hi) >> 1)
			if price.less(levels[m].Price) {
				lo = m + 1
			} else {
				hi = m
			}
		}
	} else {
		for lo < hi {
			m := int(uint(lo+hi) >> 1)
			if levels[m].Price.less(price) {
				lo = m + 1
			} else {
				hi = m
			}
		}
	}
	return lo, lo < len(levels) && levels[lo].Price == price
}

// set puts l at its price, or removes the price when l.Size is zero.
func (s *side) set(l Level) {
	i, found := s.find(l.Price)
	switch {
	case l.Size.IsZero() && found:
		s.levels = append(s.levels[:i], s.levels[i+1:]...)
	case l.Size.IsZero():
	case found:
		s.levels[i] = l
	default:
		s.levels = append(s.levels, Level{})
		copy(s.levels[i+1:], s.levels[i:])
		s.levels[i] = l
	}
}

// reset empties the side, keeping its room.
func (s *side) reset() { s.levels = s.levels[:0] }

// best is the side's best level.
func (s *side) best() (Level, bool) {
	if len(s.levels) == 0 {
		return Level{}, false
	}
	return s.levels[0], true
}
