// Package jsonscan finds keys and value boundaries in JSON text without
// decoding it. It is the classifier's toolbox: every function takes the
// frame and an offset and returns an offset, so nothing is allocated.
//
// The scanner is strict about structure (brackets, strings, commas) and lax
// about scalars (a number is whatever runs up to the next delimiter): values
// are sliced, never interpreted, and whoever decodes them reports their
// errors.
package jsonscan

import (
	"bytes"
	"errors"
)

// ErrSyntax reports JSON text whose structure the scanner cannot follow.
var ErrSyntax = errors.New("jsonscan: malformed JSON")

// isSpace marks the four JSON whitespace bytes.
var isSpace = [256]bool{' ': true, '\t': true, '\n': true, '\r': true}

// isDelim marks the bytes that end a scalar value.
var isDelim = [256]bool{' ': true, '\t': true, '\n': true, '\r': true, ',': true, '}': true, ']': true, ':': true}

// SkipSpace returns the index of the first non-whitespace byte at or after i.
func SkipSpace(b []byte, i int) int {
	for i < len(b) && isSpace[b[i]] {
		i++
	}
	return i
}

// SkipString returns the index just past the string whose opening quote is
// at b[i].
func SkipString(b []byte, i int) (int, error) {
	i++ // opening quote
	for {
		q := bytes.IndexByte(b[i:], '"')
		if q < 0 {
			return 0, ErrSyntax
		}
		i += q
		// An even number of backslashes before the quote means it closes.
		n := 0
		for j := i - 1; j >= 0 && b[j] == '\\'; j-- {
			n++
		}
		i++
		if n%2 == 0 {
			return i, nil
		}
	}
}

// SkipValue returns the index just past the value that starts at b[i]
// (whitespace before it is skipped).
func SkipValue(b []byte, i int) (int, error) {
	i = SkipSpace(b, i)
	if i >= len(b) {
		return 0, ErrSyntax
	}
	switch b[i] {
	case '"':
		return SkipString(b, i)
	case '{', '[':
		return skipContainer(b, i)
	case ',', ':', '}', ']':
		return 0, ErrSyntax
	default:
		start := i
		for i < len(b) && !isDelim[b[i]] {
			i++
		}
		if i == start {
			return 0, ErrSyntax
		}
		return i, nil
	}
}

// skipContainer skips a balanced object or array, honouring strings.
func skipContainer(b []byte, i int) (int, error) {
	depth := 0
	for i < len(b) {
		switch b[i] {
		case '"':
			end, err := SkipString(b, i)
			if err != nil {
				return 0, err
			}
			i = end
			continue
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return i + 1, nil
			}
		}
		i++
	}
	return 0, ErrSyntax
}

// Members iterates the members of the object that starts at b[i]. The zero
// value is not usable; call Object.
type Members struct {
	b    []byte
	i    int
	done bool
	err  error
}

// Object starts iterating the object at b[i] (after optional whitespace).
func Object(b []byte, i int) Members {
	i = SkipSpace(b, i)
	if i >= len(b) || b[i] != '{' {
		return Members{done: true, err: ErrSyntax}
	}
	return Members{b: b, i: i + 1}
}

// Next returns the next member's key (without quotes, escapes untouched)
// and the index where its value starts. ok is false at the end of the
// object or on a syntax error (see Err). The caller must call Skip or
// SkipTo before the following Next.
func (m *Members) Next() (key []byte, value int, ok bool) {
	if m.done {
		return nil, 0, false
	}
	i := SkipSpace(m.b, m.i)
	if i < len(m.b) && m.b[i] == ',' {
		i = SkipSpace(m.b, i+1)
	}
	if i >= len(m.b) {
		m.fail()
		return nil, 0, false
	}
	if m.b[i] == '}' {
		m.done = true
		m.i = i + 1
		return nil, 0, false
	}
	if m.b[i] != '"' {
		m.fail()
		return nil, 0, false
	}
	end, err := SkipString(m.b, i)
	if err != nil {
		m.fail()
		return nil, 0, false
	}
	key = m.b[i+1 : end-1]
	i = SkipSpace(m.b, end)
	if i >= len(m.b) || m.b[i] != ':' {
		m.fail()
		return nil, 0, false
	}
	m.i = SkipSpace(m.b, i+1)
	if m.i >= len(m.b) {
		m.fail()
		return nil, 0, false
	}
	return key, m.i, true
}

// Skip moves past the value of the current member and returns its end.
// On a syntax error it returns the value's start, so the caller's slice
// is empty, and the iteration ends with Err set.
func (m *Members) Skip() int {
	end, err := SkipValue(m.b, m.i)
	if err != nil {
		m.fail()
		return m.i
	}
	m.i = end
	return end
}

// SkipTo moves past the current member's value, whose end the caller found.
func (m *Members) SkipTo(end int) { m.i = end }

// Err reports a syntax error met while iterating.
func (m *Members) Err() error { return m.err }

func (m *Members) fail() {
	m.done = true
	if m.err == nil {
		m.err = ErrSyntax
	}
}

// TailValue returns the end of a container value that starts at b[start]
// when it is the last member of the enclosing objects that close the frame:
// outer is how many closing braces follow it (1 for {"k":V}, 2 for
// {"p":{"k":V}}). It looks only at the frame's tail, so it is O(1); ok is
// false when the tail does not close as a value of that kind would, and the
// caller must fall back to SkipValue.
//
// Every dialect's servers put the payload last, so this is the hot path: it
// slices a 600-byte notification without reading it.
func TailValue(b []byte, start, outer int) (end int, ok bool) {
	if start >= len(b) {
		return 0, false
	}
	var closer byte
	switch b[start] {
	case '{':
		closer = '}'
	case '[':
		closer = ']'
	default:
		return 0, false
	}
	i := len(b) - 1
	for n := 0; n < outer; n++ {
		for i > start && isSpace[b[i]] {
			i--
		}
		if i <= start || b[i] != '}' {
			return 0, false
		}
		i--
	}
	for i > start && isSpace[b[i]] {
		i--
	}
	if i <= start || b[i] != closer {
		return 0, false
	}
	return i + 1, true
}

// Uint parses the unsigned decimal integer b; ok is false for
// anything else (signs, fractions, overflow).
func Uint(b []byte) (v uint64, ok bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if v > (1<<64-1-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	return v, true
}

// Unquote returns the contents of the JSON string value b (with quotes);
// ok is false when b is not a string or holds escapes, which keys and
// topics never need.
func Unquote(b []byte) ([]byte, bool) {
	if len(b) < 2 || b[0] != '"' || b[len(b)-1] != '"' {
		return nil, false
	}
	s := b[1 : len(b)-1]
	if bytes.IndexByte(s, '\\') >= 0 {
		return nil, false
	}
	return s, true
}

// Elements calls fn with each element of the array that starts at b[i],
// stopping early when fn returns false.
func Elements(b []byte, i int, fn func(elem []byte) bool) error {
	i = SkipSpace(b, i)
	if i >= len(b) || b[i] != '[' {
		return ErrSyntax
	}
	i = SkipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return nil
	}
	for {
		start := SkipSpace(b, i)
		end, err := SkipValue(b, start)
		if err != nil {
			return err
		}
		if !fn(b[start:end]) {
			return nil
		}
		i = SkipSpace(b, end)
		if i >= len(b) {
			return ErrSyntax
		}
		switch b[i] {
		case ',':
			i++
		case ']':
			return nil
		default:
			return ErrSyntax
		}
	}
}
