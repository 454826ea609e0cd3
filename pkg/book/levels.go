package book

import (
	"errors"
	"fmt"

	"github.com/wsfan/wsfan/internal/jsonscan"
)

// LevelLayout says how an exchange writes a level: as a JSON array of
// price, size and, where it has one, the second amount (Level.Aux),
// optionally after an action string.
type LevelLayout struct {
	// Action says each level starts with an action string (Deribit's
	// "new", "change", "delete"); "delete" removes the price whatever
	// the size says.
	Action bool
	// Aux says a third amount follows the size (Thalex's outright
	// amount).
	Aux bool
}

var errLevel = errors.New("book: a level is not [price, size]")

// AppendLevels reads the JSON array of levels b, in layout, appending
// them to dst: the helper every exchange's Rules share. Prices and sizes
// are JSON numbers or decimal strings. It allocates only when dst must
// grow.
func AppendLevels(dst []Level, b []byte, layout LevelLayout) ([]Level, error) {
	i := jsonscan.SkipSpace(b, 0)
	if i >= len(b) || b[i] != '[' {
		return dst, fmt.Errorf("%w: levels are not an array", errLevel)
	}
	i = jsonscan.SkipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return dst, nil
	}
	for {
		end, err := jsonscan.SkipValue(b, i)
		if err != nil {
			return dst, err
		}
		dst = append(dst, Level{})
		if err := readLevel(&dst[len(dst)-1], b[i:end], layout); err != nil {
			return dst[:len(dst)-1], err
		}
		i = jsonscan.SkipSpace(b, end)
		if i >= len(b) {
			return dst, jsonscan.ErrSyntax
		}
		switch b[i] {
		case ',':
			i = jsonscan.SkipSpace(b, i+1)
		case ']':
			return dst, nil
		default:
			return dst, jsonscan.ErrSyntax
		}
	}
}

// readLevel reads one level, the JSON array b, into the zero Level l
// (in place: a Level is six words).
func readLevel(l *Level, b []byte, layout LevelLayout) error {
	var fields [4][]byte
	n := 0
	want := 2
	if layout.Action {
		want++
	}
	if layout.Aux {
		want++
	}
	i := jsonscan.SkipSpace(b, 0)
	if i >= len(b) || b[i] != '[' {
		return fmt.Errorf("%w: %.40s", errLevel, b)
	}
	i++
	for n < want {
		i = jsonscan.SkipSpace(b, i)
		end, err := jsonscan.SkipValue(b, i)
		if err != nil {
			return fmt.Errorf("%w: %.40s", errLevel, b)
		}
		fields[n] = b[i:end]
		n++
		i = jsonscan.SkipSpace(b, end)
		if i >= len(b) || (b[i] != ',' && b[i] != ']') {
			return fmt.Errorf("%w: %.40s", errLevel, b)
		}
		if b[i] == ']' {
			break
		}
		i++
	}
	if n < want {
		return fmt.Errorf("%w: %.40s", errLevel, b)
	}
	f := fields[:n]
	deleted := false
	if layout.Action {
		deleted = jsonscan.StringIs(f[0], "delete")
		f = f[1:]
	}
	var err error
	if l.Price, err = ParseDecimal(f[0]); err != nil {
		return err
	}
	if l.Size, err = ParseDecimal(f[1]); err != nil {
		return err
	}
	if layout.Aux {
		if l.Aux, err = ParseDecimal(f[2]); err != nil {
			return err
		}
	}
	if deleted {
		l.Size, l.Aux = Decimal{}, Decimal{}
	}
	return nil
}

// AppendLevelsJSON writes levels as a JSON array in layout, each with
// action (when layout.Action) before it: what Rules.AppendSnapshot writes.
func AppendLevelsJSON(dst []byte, levels []Level, layout LevelLayout, action string) []byte {
	dst = append(dst, '[')
	for i, l := range levels {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, '[')
		if layout.Action {
			dst = append(append(append(dst, '"'), action...), `",`...)
		}
		dst = append(l.Price.AppendTo(dst), ',')
		dst = l.Size.AppendTo(dst)
		if layout.Aux {
			dst = l.Aux.AppendTo(append(dst, ','))
		}
		dst = append(dst, ']')
	}
	return append(dst, ']')
}

// AppendLevelsQuoted writes levels as a JSON array of [price, size]
// strings, as Ethereal writes them.
func AppendLevelsQuoted(dst []byte, levels []Level) []byte {
	dst = append(dst, '[')
	for i, l := range levels {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(l.Price.AppendTo(append(dst, `["`...)), `","`...)
		dst = append(l.Size.AppendTo(dst), `"]`...)
	}
	return append(dst, ']')
}
