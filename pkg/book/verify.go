package book

// Verifying is Rules whose exchange sends, with each book message, a
// digest of the book the message leaves (Kraken's CRC32 of the ten best
// levels a side): Book.Apply calls Verify once the message is applied
// (and the book truncated, Truncating), on the applying goroutine, under
// the book's lock, so no reader sees a book that failed it. An error
// breaks the book as a broken chain does: invalid at once, a resync
// asked once (a *BreakError naming Verify's error). u is the message as
// Parse read it (Update.Checksum); bids and asks are the book's levels,
// best first, to read and not keep.
type Verifying interface {
	Verify(u *Update, bids, asks []Level) error
}

// Truncating is Rules whose books hold a subscribed depth and whose
// exchange sends no removal for a level pushed beyond it (Kraken: "after
// each update, the book should be truncated to your subscribed depth"):
// after each message the book keeps the best Depth levels a side, the
// rest dropped before Verify runs.
type Truncating interface {
	Depth() int
}

// settleLocked truncates the book to the rules' depth and verifies it,
// after a message u was applied: the reason it fails, or "". Called with
// mu held for writing.
func (b *Book) settleLocked(u *Update) string {
	if t, ok := b.rules.(Truncating); ok {
		if n := t.Depth(); n > 0 {
			b.bids.truncate(n)
			b.asks.truncate(n)
		}
	}
	if v, ok := b.rules.(Verifying); ok {
		if err := v.Verify(u, b.bids.levels, b.asks.levels); err != nil {
			return err.Error()
		}
	}
	return ""
}

// truncate keeps the best n levels.
func (s *side) truncate(n int) {
	if len(s.levels) > n {
		s.levels = s.levels[:n]
	}
}
