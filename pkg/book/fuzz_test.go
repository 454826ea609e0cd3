package book_test

import (
	"errors"
	"maps"
	"math/big"
	"slices"
	"strings"
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
		price, size := opsPrice(p[i], p[i+1]), book.NewDecimal(int64(p[i+2]), 3)
		if p[i]&1 == 0 {
			u.Bids = append(u.Bids, book.Level{Price: price, Size: size})
		} else {
			u.Asks = append(u.Asks, book.Level{Price: price, Size: size})
		}
	}
	return nil
}

func (opsRules) AppendSnapshot(dst []byte, _ *book.State) []byte { return dst }

// opsPrice is the price opsRules reads from a level's first two bytes:
// p/100 for a bid, 1000 + p/100 for an ask.
func opsPrice(sideByte, p byte) book.Decimal {
	if sideByte&1 == 0 {
		return book.NewDecimal(int64(p), 2)
	}
	return book.NewDecimal(100_000+int64(p), 2)
}

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
				price := opsPrice(p[i], p[i+1])
				if size := book.NewDecimal(int64(p[i+2]), 3); size.IsZero() {
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
			prices := slices.SortedFunc(maps.Keys(levels), book.Decimal.Cmp)
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

// FuzzParseDecimal checks that a decimal reads back as it prints, and
// holds exactly the number its text names.
func FuzzParseDecimal(f *testing.F) {
	for _, s := range []string{"5042.34", "-0.5", "1e-8", `"68013.0"`, "92233720368.54775807", `"0.0000007465"`,
		"2290075956", "1e-18", "0.000000000000000001", "170141183460469231731.687303715884105727",
		"-170141183460469231731.687303715884105728", "18.446744073709551616", "1.5e+3"} {
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
		text := strings.Trim(string(in), `"`)
		if want, ok := new(big.Rat).SetString(text); ok && !strings.ContainsAny(text, "xXpP_") {
			if got, _ := new(big.Rat).SetString(d.String()); got.Cmp(want) != 0 {
				t.Fatalf("%q read as %s", in, d)
			}
		}
	})
}
