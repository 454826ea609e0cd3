package book

import (
	"errors"
	"fmt"
	"math"
	"strconv"
)

// Decimal is an exact decimal number with at most Scale fractional
// digits, held as a count of 10^-Scale units in an int64: from
// -92,233,720,368.54775808 to 92,233,720,368.54775807.
//
// Prices and sizes are decimals on every exchange (Deribit and Thalex
// write them as JSON numbers, Ethereal as strings); a float64 cannot hold
// 0.1 exactly, so two levels the exchange keeps apart could compare equal
// after arithmetic, and a size summed from floats drifts. An int64
// compares and copies like an integer, needs no allocation (unlike
// math/big or an arbitrary-precision decimal library), and 8 fractional
// digits cover every tick and lot size these venues list. A value the
// type cannot hold exactly is an error at parse time, never rounded.
type Decimal int64

// Scale is Decimal's number of fractional digits.
const Scale = 8

// unit is 10^Scale: Decimal(unit) is 1.
const unit = 100_000_000

// ErrDecimal is wrapped by every error ParseDecimal returns.
var ErrDecimal = errors.New("book: not a decimal this book holds exactly")

// ParseDecimal reads a JSON number (5042.34, 30, 1.5e-3), or its text
// inside a JSON string, as a Decimal.
func ParseDecimal(b []byte) (Decimal, error) {
	// The errors copy b (string(b)), so b never escapes and a caller's
	// slices of a frame stay on its stack.
	s := b
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		s = s[1 : len(s)-1]
	}
	if len(s) == 0 {
		return 0, fmt.Errorf("%w: empty", ErrDecimal)
	}
	neg := s[0] == '-'
	if neg {
		s = s[1:]
	}
	var mant uint64 // the digits, without the point
	exp := 0        // the power of ten mant is multiplied by
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
		if mant > (math.MaxUint64-9)/10 {
			return 0, fmt.Errorf("%w: %q has too many digits", ErrDecimal, string(b))
		}
		mant = mant*10 + uint64(c-'0')
		if point {
			exp--
		}
	}
	if digits == 0 {
		return 0, fmt.Errorf("%w: %q", ErrDecimal, string(b))
	}
	if i < len(s) {
		if s[i] != 'e' && s[i] != 'E' {
			return 0, fmt.Errorf("%w: %q", ErrDecimal, string(b))
		}
		e, err := strconv.Atoi(string(s[i+1:]))
		if err != nil || e > 40 || e < -40 {
			return 0, fmt.Errorf("%w: %q", ErrDecimal, string(b))
		}
		exp += e
	}
	// Bring mant to 10^-Scale units: drop trailing zeros past the scale,
	// refuse any other digit there.
	for exp < -Scale {
		if mant%10 != 0 {
			return 0, fmt.Errorf("%w: %q has more than %d fractional digits", ErrDecimal, string(b), Scale)
		}
		mant /= 10
		exp++
	}
	for ; exp > -Scale; exp-- {
		if mant > math.MaxInt64/10 {
			return 0, fmt.Errorf("%w: %q is too large", ErrDecimal, string(b))
		}
		mant *= 10
	}
	if mant > math.MaxInt64 {
		return 0, fmt.Errorf("%w: %q is too large", ErrDecimal, string(b))
	}
	if neg {
		return -Decimal(mant), nil
	}
	return Decimal(mant), nil
}

// AppendTo appends d in its shortest decimal form: 5042.34, 30, -0.5.
func (d Decimal) AppendTo(dst []byte) []byte {
	u := uint64(d)
	if d < 0 {
		dst = append(dst, '-')
		u = uint64(-d) // -MinInt64 wraps to itself, which as uint64 is right
	}
	dst = strconv.AppendUint(dst, u/unit, 10)
	frac := u % unit
	if frac == 0 {
		return dst
	}
	var buf [Scale]byte
	n := Scale
	for i := Scale - 1; i >= 0; i-- {
		buf[i] = byte('0' + frac%10)
		frac /= 10
	}
	for n > 0 && buf[n-1] == '0' {
		n--
	}
	dst = append(dst, '.')
	return append(dst, buf[:n]...)
}

// String is d in its shortest decimal form.
func (d Decimal) String() string { return string(d.AppendTo(nil)) }

// Float64 is d as the nearest float64, for display and arithmetic that
// need not be exact.
func (d Decimal) Float64() float64 { return float64(d) / unit }

// DecimalOf is the Decimal nearest f, for tests and made-up data; parse
// the exchange's text instead wherever exactness matters.
func DecimalOf(f float64) Decimal { return Decimal(math.Round(f * unit)) }
