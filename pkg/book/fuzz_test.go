package book_test

import (
	"errors"
	"maps"
	"slices"
	"testing"

	"github.com/wsfan/wsfan/pkg/book"
)

// opsRules reads a fuzzer's bytes as one update: each 3 bytes set a level
// (side and price from the first two, size from the third, 0 removes);
// bids are priced below 1000, asks from 1000, so the book never crosses.
type opsRules struct{}

func (opsRules) Parse(p []byte, marked bool, u *book.Update) error {
	if len(p) == 0 {
		return errors.New("empty")
	}
	u.Snapshot = marked
	for i := 0; i+2 < len(p); i += 3 {
		price := book.Decimal(int64(p[i+1]) * 1e6)
		size := book.Decimal(int64(p[i+2]) * 1e5)
		if p[i]&1 == 0 {
			u.Bids = append(u.Bids, book.Level{Price: price, Size: size})
		} else {
			u.Asks = append(u.Asks, book.Level{Price: price + 1000*1e8, Size: size})
		}
	}
	return nil
}

func (opsRules) AppendSnapshot(dst []byte, _ *book.State) []byte { return dst }

// FuzzApply applies fuzzed updates to a Book and to a plain map and
// checks both hold the same levels, in the order of each side.
func FuzzApply(f *testing.F) {
	f.Add([]byte{0, 1, 1, 1, 2, 2}, []byte{0, 1, 0, 0, 3, 3})
	f.Add([]byte{0, 5, 5, 0, 4, 4, 1, 1, 1}, []byte{0, 4, 0, 1, 1, 9, 0, 7, 1})
	f.Fuzz(func(t *testing.T, snapshot, change []byte) {
		b := book.New("fuzz", opsRules{})
		ref := map[bool]map[book.Decimal]book.Decimal{true: {}, false: {}}
		apply := func(p []byte, marked bool) {
			if marked {
				ref = map[bool]map[book.Decimal]book.Decimal{true: {}, false: {}}
			}
			if err := b.Apply(p, marked); err != nil {
				return
			}
			for i := 0; i+2 < len(p); i += 3 {
				bid := p[i]&1 == 0
				price := book.Decimal(int64(p[i+1]) * 1e6)
				if !bid {
					price += 1000 * 1e8
				}
				if size := book.Decimal(int64(p[i+2]) * 1e5); size == 0 {
					delete(ref[bid], price)
				} else {
					ref[bid][price] = size
				}
			}
		}
		apply(snapshot, true)
		apply(change, false)
		apply(change, false)
		if len(snapshot) == 0 {
			return
		}
		s := b.Copy()
		check := func(side []book.Level, levels map[book.Decimal]book.Decimal, desc bool) {
			prices := slices.Sorted(maps.Keys(levels))
			if desc {
				slices.Reverse(prices)
			}
			if len(prices) != len(side) {
				t.Fatalf("%d levels, want %d", len(side), len(prices))
			}
			for i, p := range prices {
				if side[i].Price != p || side[i].Size != levels[p] {
					t.Fatalf("level %d is %v, want %v %v", i, side[i], p, levels[p])
				}
			}
		}
		check(s.Bids, ref[true], true)
		check(s.Asks, ref[false], false)
	})
}

// FuzzParseDecimal checks that a decimal reads back as it prints.
func FuzzParseDecimal(f *testing.F) {
	for _, s := range []string{"5042.34", "-0.5", "1e-8", `"68013.0"`, "92233720368.54775807"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		d, err := book.ParseDecimal(in)
		if err != nil {
			return
		}
		back, err := book.ParseDecimal([]byte(d.String()))
		if err != nil || back != d {
			t.Fatalf("%q → %s → %v, %v", in, d, back, err)
		}
	})
}
