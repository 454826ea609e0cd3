package book

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strconv"
)

// Decimal is an exact decimal number with at most Scale (18) fractional
// digits, held as a signed 128-bit count of 10^-18 units in two 64-bit
// words, two's complement: the high word an int64 that carries the sign,
// the low one a uint64, so the order is the high words' signed order and
// then the low words' unsigned one, and the zero Decimal is 0. It ranges
// from -170,141,183,460,469,231,731.687303715884105728 to
// 170,141,183,460,469,231,731.687303715884105727. Every tick, lot and
// amount a venue lists fits: OKX's finest tick (1e-12, BABYDOGE-USDT),
// sizes beyond 10^10, Ethereum's 18-decimal amounts (wei), and integer
// parts up to 1.7×10^20. A value with more than 18 fractional digits, or
// beyond that range, is an error at parse time, never rounded.
//
// Prices and sizes are decimals on every exchange (Deribit and Thalex
// write them as JSON numbers, Ethereal and OKX as strings); a float64
// cannot hold 0.1 exactly, so two levels the exchange keeps apart could
// compare equal after arithmetic, and a size summed from floats drifts.
// A fixed point of two machine words needs no allocation (unlike math/big
// or an arbitrary-precision decimal library), and is comparable: == holds
// for equal values (each value has one representation) and a Decimal is
// a map key. Go has no 128-bit integer, so the
// order and the arithmetic are methods (Cmp, Add, Sub, Half). One scale
// for every book, rather than a scale per book taken from the
// instrument's tick, keeps a value independent of the instrument list
// (which a feed does not carry, and a venue changes) and lets prices of
// any two books be compared; its cost is a Level of 48 bytes instead of
// 24.
type Decimal struct {
	hi int64  // the high 64 bits of the count of 10^-Scale units
	lo uint64 // the low 64 bits
}

// Scale is Decimal's number of fractional digits.
const Scale = 18

// unit is 10^Scale: the count of units in 1.
const unit = 1_000_000_000_000_000_000

// pow10 are the powers of ten a uint64 holds.
var pow10 = [20]uint64{
	1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19,
}

// ErrDecimal is wrapped by every error ParseDecimal returns.
var ErrDecimal = errors.New("book: not a decimal this book holds exactly")

// ParseDecimal reads a JSON number (5042.34, 30, 1.5e-3), or its text
// inside a JSON string, as a Decimal. It refuses a number with more than
// Scale fractional digits (once trailing zeros are dropped) or beyond
// Decimal's range.
func ParseDecimal(b []byte) (Decimal, error) {
	// The errors copy b (string(b)), so b never escapes and a caller's
	// slices of a frame stay on its stack.
	s := b
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		s = s[1 : len(s)-1]
	}
	if len(s) == 0 {
		return Decimal{}, fmt.Errorf("%w: empty", ErrDecimal)
	}
	neg := s[0] == '-'
	if neg {
		s = s[1:]
	}
	var hi, lo uint64 // the digits without the point, as 128 bits
	exp := 0          // the power of ten they are multiplied by
	digits, point := 0, false
	i := 0
	for ; i < len(s); i++ {
		c := s[i]
		if c == '.' && !point {
			point = true
			continue
		}
		if c < '0' || c > '9' {
			break
		}
		digits++
		if point {
			exp--
		}
		d := uint64(c - '0')
		if hi == 0 && lo <= (math.MaxUint64-9)/10 { // 19 digits and less
			lo = lo*10 + d
			continue
		}
		var ok bool
		if hi, lo, ok = mulAdd(hi, lo, 10, d); !ok {
			return Decimal{}, fmt.Errorf("%w: %q has too many digits", ErrDecimal, string(b))
		}
	}
	if digits == 0 {
		return Decimal{}, fmt.Errorf("%w: %q", ErrDecimal, string(b))
	}
	if i < len(s) {
		if s[i] != 'e' && s[i] != 'E' {
			return Decimal{}, fmt.Errorf("%w: %q", ErrDecimal, string(b))
		}
		e, err := strconv.Atoi(string(s[i+1:]))
		if err != nil || e > 80 || e < -80 {
			return Decimal{}, fmt.Errorf("%w: %q", ErrDecimal, string(b))
		}
		exp += e
	}
	// Bring the digits to 10^-Scale units: drop trailing zeros past the
	// scale, refuse any other digit there.
	for ; exp < -Scale; exp++ {
		var r uint64
		if hi, lo, r = divMod10(hi, lo); r != 0 {
			return Decimal{}, fmt.Errorf("%w: %q has more than %d fractional digits", ErrDecimal, string(b), Scale)
		}
	}
	for k := exp + Scale; k > 0; {
		n := min(k, len(pow10)-1)
		var ok bool
		if hi, lo, ok = mulAdd(hi, lo, pow10[n], 0); !ok {
			return Decimal{}, fmt.Errorf("%w: %q is too large", ErrDecimal, string(b))
		}
		k -= n
	}
	// The magnitude is at most 2^127-1, or 2^127 for a negative number.
	if hi > math.MaxInt64 && !(neg && hi == 1<<63 && lo == 0) {
		return Decimal{}, fmt.Errorf("%w: %q is too large", ErrDecimal, string(b))
	}
	d := Decimal{hi: int64(hi), lo: lo}
	if neg {
		d = d.neg()
	}
	return d, nil
}

// mulAdd is the 128-bit (hi, lo)·m + a, and false when it overflows 128
// bits.
func mulAdd(hi, lo, m, a uint64) (uint64, uint64, bool) {
	ph, pl := bits.Mul64(lo, m)
	qh, ql := bits.Mul64(hi, m)
	lo, c := bits.Add64(pl, a, 0)
	hi, c = bits.Add64(ql, ph, c)
	return hi, lo, qh == 0 && c == 0
}

// divMod10 is the 128-bit (hi, lo) divided by 10, and the remainder.
func divMod10(hi, lo uint64) (q1, q0, r uint64) {
	q1, r = hi/10, hi%10
	q0, r = bits.Div64(r, lo, 10)
	return q1, q0, r
}

// neg is -d; the most negative Decimal is its own negation, as with
// integers.
func (d Decimal) neg() Decimal {
	lo, b := bits.Sub64(0, d.lo, 0)
	hi, _ := bits.Sub64(0, uint64(d.hi), b)
	return Decimal{hi: int64(hi), lo: lo}
}

// abs is d's magnitude as an unsigned 128-bit number (right for the most
// negative Decimal too).
func (d Decimal) abs() (hi, lo uint64) {
	if d.hi < 0 {
		d = d.neg()
	}
	return uint64(d.hi), d.lo
}

// NewDecimal is v·10^-digits: NewDecimal(504234, 2) is 5042.34. It is
// exact for digits up to Scale (any int64 then fits); beyond, the digits
// past Scale are dropped, toward zero, as integer division drops them.
func NewDecimal(v int64, digits uint) Decimal {
	if digits > Scale {
		k := digits - Scale
		if k >= 19 { // |v| < 10^19
			return Decimal{}
		}
		v /= int64(pow10[k])
		digits = Scale
	}
	u := uint64(v)
	if v < 0 {
		u = -u // -MinInt64 wraps to itself, which as uint64 is right
	}
	hi, lo := bits.Mul64(u, pow10[Scale-digits])
	d := Decimal{hi: int64(hi), lo: lo}
	if v < 0 {
		d = d.neg()
	}
	return d
}

// Units is d as a count of 10^-digits units (d.Units(9) of 1.5 is
// 1500000000), truncated toward zero, and false when that count does not
// fit an int64.
func (d Decimal) Units(digits uint) (int64, bool) {
	hi, lo := d.abs()
	var u uint64
	switch {
	case digits <= Scale:
		div := pow10[Scale-digits]
		if hi >= div {
			return 0, false
		}
		u, _ = bits.Div64(hi, lo, div)
	case hi == 0 && lo == 0:
		return 0, true
	default:
		k := digits - Scale
		if hi != 0 || k >= uint(len(pow10)) {
			return 0, false
		}
		var over uint64
		if over, u = bits.Mul64(lo, pow10[k]); over != 0 {
			return 0, false
		}
	}
	if d.hi < 0 {
		if u > 1<<63 {
			return 0, false
		}
		return -int64(u), true // -(1<<63) is MinInt64
	}
	if u > math.MaxInt64 {
		return 0, false
	}
	return int64(u), true
}

// Cmp compares d and e: -1 when d < e, 0 when they are equal, +1 when
// d > e.
func (d Decimal) Cmp(e Decimal) int {
	switch {
	case d.less(e):
		return -1
	case e.less(d):
		return 1
	}
	return 0
}

// less reports whether d < e.
func (d Decimal) less(e Decimal) bool {
	return d.hi < e.hi || d.hi == e.hi && d.lo < e.lo
}

// IsZero reports whether d is 0 (d == Decimal{}).
func (d Decimal) IsZero() bool { return d == Decimal{} }

// Add is d + e. Like integer addition, it wraps around beyond Decimal's
// range.
func (d Decimal) Add(e Decimal) Decimal {
	lo, c := bits.Add64(d.lo, e.lo, 0)
	hi, _ := bits.Add64(uint64(d.hi), uint64(e.hi), c)
	return Decimal{hi: int64(hi), lo: lo}
}

// Sub is d - e. Like integer subtraction, it wraps around beyond
// Decimal's range.
func (d Decimal) Sub(e Decimal) Decimal {
	lo, b := bits.Sub64(d.lo, e.lo, 0)
	hi, _ := bits.Sub64(uint64(d.hi), uint64(e.hi), b)
	return Decimal{hi: int64(hi), lo: lo}
}

// Half is d / 2 to Scale digits, truncated toward zero as integer
// division truncates: a mid price is bid.Add(ask).Half().
func (d Decimal) Half() Decimal {
	hi, lo := d.abs()
	h := Decimal{hi: int64(hi >> 1), lo: lo>>1 | hi<<63}
	if d.hi < 0 {
		h = h.neg()
	}
	return h
}

// AppendTo appends d in its shortest decimal form: 5042.34, 30, -0.5.
func (d Decimal) AppendTo(dst []byte) []byte {
	if d.hi < 0 {
		dst = append(dst, '-')
	}
	hi, lo := d.abs()
	// The integer part is (hi, lo) / 10^Scale, in two steps since hi may
	// exceed the divisor; it reaches 1.7·10^20, past a uint64, when q1 > 0.
	q1, r := hi/unit, hi%unit
	q0, frac := bits.Div64(r, lo, unit)
	if q1 == 0 {
		dst = strconv.AppendUint(dst, q0, 10)
	} else {
		top, rest := bits.Div64(q1, q0, pow10[19])
		dst = strconv.AppendUint(dst, top, 10)
		dst = appendDigits(dst, rest, 19)
	}
	if frac == 0 {
		return dst
	}
	n := Scale
	for frac%10 == 0 {
		frac /= 10
		n--
	}
	return appendDigits(append(dst, '.'), frac, n)
}

// appendDigits appends v as exactly n digits, zeros first.
func appendDigits(dst []byte, v uint64, n int) []byte {
	var buf [19]byte
	for i := n - 1; i >= 0; i-- {
		buf[i] = byte('0' + v%10)
		v /= 10
	}
	return append(dst, buf[:n]...)
}

// String is d in its shortest decimal form.
func (d Decimal) String() string { return string(d.AppendTo(nil)) }

// Float64 is d as a float64, to within float64's precision, for display
// and arithmetic that need not be exact.
func (d Decimal) Float64() float64 {
	if (d.hi == 0 && d.lo <= math.MaxInt64) || (d.hi == -1 && d.lo > math.MaxInt64) {
		return float64(int64(d.lo)) / unit // d fits an int64
	}
	hi, lo := d.abs()
	f := (float64(hi)*(1<<64) + float64(lo)) / unit
	if d.hi < 0 {
		return -f
	}
	return f
}

// DecimalOf is the Decimal of f's shortest decimal form (0.1 is 0.1),
// rounded to Scale fractional digits; 0 when f is not finite or beyond
// Decimal's range. It is for tests and made-up data: parse the
// exchange's text instead wherever exactness matters.
func DecimalOf(f float64) Decimal {
	var buf [64]byte
	if d, err := ParseDecimal(strconv.AppendFloat(buf[:0], f, 'f', -1, 64)); err == nil {
		return d
	}
	d, _ := ParseDecimal(strconv.AppendFloat(buf[:0], f, 'f', Scale, 64))
	return d
}
