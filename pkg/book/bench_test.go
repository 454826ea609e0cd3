package book_test

import (
	"fmt"
	"slices"
	"strconv"
	"testing"

	"github.com/wsfan/wsfan/pkg/book"
	"github.com/wsfan/wsfan/pkg/deribit"
)

// deribitChanges are n chained Deribit changes of one or two levels near
// the top of a 50-level book, and the snapshot before them.
func deribitChanges(n int) (snapshot []byte, changes [][]byte) {
	levels := func(side string, from float64, step float64) string {
		s := ""
		for i := range 50 {
			if i > 0 {
				s += ","
			}
			s += fmt.Sprintf(`["new",%s,%d]`, strconv.FormatFloat(from+step*float64(i), 'f', -1, 64), 10+i)
		}
		return `"` + side + `":[` + s + `]`
	}
	snapshot = []byte(`{"type":"snapshot","timestamp":1,"instrument_name":"BTC-PERPETUAL","change_id":1000,` + levels("bids", 64999.5, -0.5) + `,` + levels("asks", 65000, 0.5) + `}`)
	for i := range n {
		id := 1001 + i
		changes = append(changes, fmt.Appendf(nil, `{"type":"change","timestamp":%d,"prev_change_id":%d,"instrument_name":"BTC-PERPETUAL","change_id":%d,"bids":[["change",%s,%d]],"asks":[["change",%s,%d]]}`,
			id, id-1, id, strconv.FormatFloat(64999.5-0.5*float64(i%10), 'f', -1, 64), 20+i%7, strconv.FormatFloat(65000+0.5*float64(i%10), 'f', -1, 64), 30+i%5))
	}
	return snapshot, changes
}

// BenchmarkApplyChange applies one Deribit change (JSON read included)
// to a 50-level book: the steady state allocates nothing.
func BenchmarkApplyChange(b *testing.B) {
	snap, changes := deribitChanges(1024)
	bk := book.New("book.BTC-PERPETUAL.100ms", deribit.BookRules("book.BTC-PERPETUAL.100ms"))
	if err := bk.Apply(snap, false); err != nil {
		b.Fatal(err)
	}
	for _, c := range changes { // warm: the sides and the update reach their size
		if err := bk.Apply(c, false); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		// The chain runs out every len(changes): a snapshot, untimed,
		// starts it over.
		if i%len(changes) == 0 {
			b.StopTimer()
			if err := bk.Apply(snap, false); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
		if err := bk.Apply(changes[i%len(changes)], false); err != nil {
			b.Fatal(err)
		}
	}
}

// mapBook is the plain book a first attempt writes: a map a side, sorted
// to read the top.
type mapBook struct{ bids, asks map[book.Decimal]book.Decimal }

func (m *mapBook) set(bid bool, l book.Level) {
	side := m.asks
	if bid {
		side = m.bids
	}
	if l.Size.IsZero() {
		delete(side, l.Price)
	} else {
		side[l.Price] = l.Size
	}
}

func (m *mapBook) top(n int) (bids, asks []book.Level) {
	sorted := func(side map[book.Decimal]book.Decimal, desc bool) []book.Level {
		out := make([]book.Level, 0, len(side))
		for p, s := range side {
			out = append(out, book.Level{Price: p, Size: s})
		}
		slices.SortFunc(out, func(a, b book.Level) int {
			if desc {
				a, b = b, a
			}
			return a.Price.Cmp(b.Price)
		})
		return out[:min(n, len(out))]
	}
	return sorted(m.bids, true), sorted(m.asks, false)
}

// sameBooks returns a Book and a map book holding the same 50-level
// Deribit book, and the Book's copy.
func sameBooks(b *testing.B) (*book.Book, *mapBook, book.State) {
	b.Helper()
	snap, _ := deribitChanges(0)
	bk := book.New("book.BTC-PERPETUAL.100ms", deribit.BookRules("book.BTC-PERPETUAL.100ms"))
	if err := bk.Apply(snap, false); err != nil {
		b.Fatal(err)
	}
	s := bk.Copy()
	mb := &mapBook{bids: map[book.Decimal]book.Decimal{}, asks: map[book.Decimal]book.Decimal{}}
	for _, l := range s.Bids {
		mb.set(true, l)
	}
	for _, l := range s.Asks {
		mb.set(false, l)
	}
	return bk, mb, s
}

// BenchmarkTop10 reads the best 10 levels a side of a 50-level book:
// Book against the plain map book, in the same run.
func BenchmarkTop10(b *testing.B) {
	bk, mb, _ := sameBooks(b)
	b.Run("impl=book", func(b *testing.B) {
		b.ReportAllocs()
		var bids, asks []book.Level
		for range b.N {
			bids, asks, _ = bk.Top(10, bids[:0], asks[:0])
		}
	})
	b.Run("impl=map", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			mb.top(10)
		}
	})
}

// BenchmarkSetLevel changes one level of a 50-level side: Book against
// the plain map book, in the same run.
func BenchmarkSetLevel(b *testing.B) {
	bk, mb, s := sameBooks(b)
	// The sizes the levels change by: 0, 1 and 2 units of 1e-8.
	steps := [3]book.Decimal{book.NewDecimal(0, 8), book.NewDecimal(1, 8), book.NewDecimal(2, 8)}
	b.Run("impl=book", func(b *testing.B) {
		b.ReportAllocs()
		for i := range b.N {
			l := s.Bids[i%10]
			l.Size = l.Size.Add(steps[i%3])
			bk.SetForBenchmark(l)
		}
	})
	b.Run("impl=map", func(b *testing.B) {
		b.ReportAllocs()
		for i := range b.N {
			l := s.Bids[i%10]
			l.Size = l.Size.Add(steps[i%3])
			mb.set(true, l)
		}
	})
}
