// Package jsonscan finds keys and value boundaries in JSON text without
// decoding it. It is the classifier's toolbox: every function takes the
// frame and an offset and returns an offset, so nothing is allocated.
//
// Everything the scanner walks it checks as encoding/json would: strings
// (escapes, no raw control bytes), numbers, literals, commas, colons and
// matching brackets. What it does not walk it does not check: TailValue
// slices a payload without reading it. Two things are not checked at all:
// that the text is UTF-8 (RFC 8259 requires it; encoding/json replaces
// invalid bytes with U+FFFD, the scanner keeps them as they are), and
// nesting deeper than encoding/json's 10,000 levels is counted from where
// a walk starts, not from the top of the frame.
package jsonscan

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/bits"
)

// ErrSyntax reports JSON text whose structure the scanner cannot follow.
var ErrSyntax = errors.New("jsonscan: malformed JSON")

// maxDepth is encoding/json's nesting limit.
const maxDepth = 10000

// isSpace marks the four JSON whitespace bytes.
var isSpace = [256]bool{' ': true, '\t': true, '\n': true, '\r': true}

// SkipSpace returns the index of the first non-whitespace byte at or after i.
func SkipSpace(b []byte, i int) int {
	for i < len(b) && isSpace[b[i]] {
		i++
	}
	return i
}

// AtEnd reports whether only whitespace follows b[i:].
func AtEnd(b []byte, i int) bool { return SkipSpace(b, i) == len(b) }

// SWAR constants: one in every byte, the top bit of every byte.
const (
	ones = 0x0101010101010101
	tops = 0x8080808080808080
)

// special marks every 8-byte word holding a byte a string cannot carry
// as it is: a quote, a backslash or a control byte. The test is exact
// about whether there is one; bits above the first may be spurious.
func special(w uint64) uint64 {
	q := w ^ (ones * '"')
	s := w ^ (ones * '\\')
	return ((q-ones)&^q | (s-ones)&^s | (w-ones*0x20)&^w) & tops
}

// PlainLen returns the length of the longest prefix of s that a JSON
// string holds as it is: no quote, no backslash, no control byte.
func PlainLen(s []byte) int {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		if m := special(binary.LittleEndian.Uint64(s[i:])); m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' {
			return i
		}
	}
	return i
}

// SkipString returns the index just past the string whose opening quote
// is at b[i].
func SkipString(b []byte, i int) (int, error) {
	end, _, err := scanString(b, i)
	return end, err
}

// scanString returns the index just past the string whose opening quote
// is at b[i], and whether it holds an escape.
func scanString(b []byte, i int) (end int, escaped bool, err error) {
	i++
	for {
		i += PlainLen(b[i:])
		if i >= len(b) {
			return 0, false, ErrSyntax
		}
		switch b[i] {
		case '"':
			return i + 1, escaped, nil
		case '\\':
			n := escapeLen(b[i:])
			if n == 0 {
				return 0, false, ErrSyntax
			}
			escaped = true
			i += n
		default: // a control byte
			return 0, false, ErrSyntax
		}
	}
}

// escapeLen returns the length of the escape at the start of s, or 0 when
// it is not one JSON allows.
func escapeLen(s []byte) int {
	if len(s) < 2 {
		return 0
	}
	switch s[1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 2
	case 'u':
		if len(s) >= 6 && hex4(s[2:6]) >= 0 {
			return 6
		}
	}
	return 0
}

// hex4 decodes four hex digits, or returns -1.
func hex4(s []byte) rune {
	var r rune
	for _, c := range s[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return -1
		}
		r = r<<4 | rune(c)
	}
	return r
}

// skipNumber returns the index just past the number at b[i], following
// JSON's grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func skipNumber(b []byte, i int) (int, error) {
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		i = digits(b, i+1)
	default:
		return 0, ErrSyntax
	}
	if i < len(b) && b[i] == '.' {
		j := digits(b, i+1)
		if j == i+1 {
			return 0, ErrSyntax
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			return 0, ErrSyntax
		}
		i = j
	}
	return i, nil
}

func digits(b []byte, i int) int {
	for i < len(b) && '0' <= b[i] && b[i] <= '9' {
		i++
	}
	return i
}

// skipScalar returns the index just past the string, number or literal
// at b[i].
func skipScalar(b []byte, i int) (int, error) {
	switch b[i] {
	case '"':
		return SkipString(b, i)
	case 't':
		return literal(b, i, "true")
	case 'f':
		return literal(b, i, "false")
	case 'n':
		return literal(b, i, "null")
	}
	return skipNumber(b, i)
}

func literal(b []byte, i int, word string) (int, error) {
	if len(b)-i < len(word) || string(b[i:i+len(word)]) != word {
		return 0, ErrSyntax
	}
	return i + len(word), nil
}

// SkipValue returns the index just past the value that starts at b[i]
// (whitespace before it is skipped), checking the whole value.
func SkipValue(b []byte, i int) (int, error) {
	i = SkipSpace(b, i)
	if i >= len(b) {
		return 0, ErrSyntax
	}
	if b[i] == '{' || b[i] == '[' {
		return skipContainer(b, i)
	}
	return skipScalar(b, i)
}

// stack records, for every open container, whether it is an object.
type stack struct {
	n      int
	inline [4]uint64 // 256 levels without allocating
	spill  []uint64
}

func (s *stack) push(object bool) bool {
	if s.n == maxDepth {
		return false
	}
	w, bit := s.n/64, uint(s.n%64)
	words := s.inline[:]
	if w >= len(words) {
		for len(s.spill) <= w-len(words) {
			s.spill = append(s.spill, 0)
		}
		words, w = s.spill, w-len(words)
	}
	if object {
		words[w] |= 1 << bit
	} else {
		words[w] &^= 1 << bit
	}
	s.n++
	return true
}

// top reports whether the innermost open container is an object.
func (s *stack) top() bool {
	k := s.n - 1
	w, bit := k/64, uint(k%64)
	if w < len(s.inline) {
		return s.inline[w]>>bit&1 == 1
	}
	return s.spill[w-len(s.inline)]>>bit&1 == 1
}

// skipContainer returns the index just past the object or array at b[i],
// checking everything inside it.
func skipContainer(b []byte, i int) (int, error) {
	var s stack
	var err error
	for {
		// A value starts at b[i].
		if c := b[i]; c == '{' || c == '[' {
			if !s.push(c == '{') {
				return 0, ErrSyntax
			}
			i = SkipSpace(b, i+1)
			if i >= len(b) || b[i] != closerOf(s.top()) {
				if i, err = valueStart(b, i, s.top()); err != nil {
					return 0, err
				}
				continue
			}
			s.n--
			i++
		} else if i, err = skipScalar(b, i); err != nil {
			return 0, err
		}
		// A value ended just before b[i]: a comma or closers follow.
		for {
			if s.n == 0 {
				return i, nil
			}
			i = SkipSpace(b, i)
			if i >= len(b) {
				return 0, ErrSyntax
			}
			if b[i] == ',' {
				if i, err = valueStart(b, SkipSpace(b, i+1), s.top()); err != nil {
					return 0, err
				}
				break
			}
			if b[i] != closerOf(s.top()) {
				return 0, ErrSyntax
			}
			s.n--
			i++
		}
	}
}

// valueStart reads past a member's key and colon when in an object, and
// returns where the member's (or element's) value starts.
func valueStart(b []byte, i int, object bool) (int, error) {
	if object {
		if i >= len(b) || b[i] != '"' {
			return 0, ErrSyntax
		}
		end, err := SkipString(b, i)
		if err != nil {
			return 0, err
		}
		i = SkipSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return 0, ErrSyntax
		}
		i = SkipSpace(b, i+1)
	}
	if i >= len(b) {
		return 0, ErrSyntax
	}
	return i, nil
}

func closerOf(object bool) byte {
	if object {
		return '}'
	}
	return ']'
}

// Members iterates the members of the object that starts at b[i]. The zero
// value is not usable; call Object.
type Members struct {
	b       []byte
	i       int
	started bool
	done    bool
	err     error
	name    [maxName + 4]byte // an escaped key, decoded
}

// Object starts iterating the object at b[i] (after optional whitespace).
func Object(b []byte, i int) Members {
	i = SkipSpace(b, i)
	if i >= len(b) || b[i] != '{' {
		return Members{done: true, err: ErrSyntax}
	}
	return Members{b: b, i: i + 1}
}

// maxName is the longest escaped key Next decodes.
const maxName = 32

// Next returns the next member's key and the index where its value
// starts. The key is decoded when it holds escapes and decodes to at most
// maxName bytes (longer escaped keys come back as written, which no member
// name a dialect looks for matches); it is valid until the following
// Next. ok is false at the end of the object or on a syntax error (see
// Err). The caller must call Skip or SkipTo before the following Next.
func (m *Members) Next() (key []byte, value int, ok bool) {
	if m.done {
		return nil, 0, false
	}
	i := SkipSpace(m.b, m.i)
	if i >= len(m.b) {
		m.fail()
		return nil, 0, false
	}
	switch {
	case m.b[i] == '}':
		m.done = true
		m.i = i + 1
		return nil, 0, false
	case m.started && m.b[i] != ',':
		m.fail()
		return nil, 0, false
	case m.started:
		i = SkipSpace(m.b, i+1)
	}
	m.started = true
	if i >= len(m.b) || m.b[i] != '"' {
		m.fail()
		return nil, 0, false
	}
	end, escaped, err := scanString(m.b, i)
	if err != nil {
		m.fail()
		return nil, 0, false
	}
	key = m.b[i+1 : end-1]
	if escaped {
		if name, ok := appendUnescaped(m.name[:0], key, maxName); ok {
			key = name
		}
	}
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

// Skip moves past the value of the current member, checking it, and
// returns its end. On a syntax error it returns the value's start, so the
// caller's slice is empty, and the iteration ends with Err set.
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

// SkipTail moves past the current member's value and returns its end,
// like Skip, but first tries TailValue with outer closing braces: a value
// that closes the frame is then sliced without being scanned.
func (m *Members) SkipTail(outer int) int {
	if end, ok := TailValue(m.b, m.i, outer); ok {
		m.i = end
		return end
	}
	return m.Skip()
}

// Err reports a syntax error met while iterating.
func (m *Members) Err() error { return m.err }

// End returns the index just past the object's closing brace, once Next
// has reported its end without an error.
func (m *Members) End() int { return m.i }

func (m *Members) fail() {
	m.done = true
	if m.err == nil {
		m.err = ErrSyntax
	}
}

// TailValue returns the end of a container value that starts at b[start]
// when it is the last member of the enclosing objects that close the frame:
// outer is how many closing braces follow it (1 for {"k":V}, 2 for
// {"p":{"k":V}}). It reads the frame's tail and searches the value for
// its own closing byte, so a value with no container of its kind inside
// costs one vectorised byte search; ok is false when the tail does not
// close as such a value would, and the caller must fall back to SkipValue.
//
// The value's inside is not checked. When the frame is valid JSON, the
// span is exactly the value: more members after it would need a closing
// byte of its kind inside the span at depth zero, which the search (or,
// when the value nests containers of its kind, a bracket count) finds.
//
// Every dialect's servers put the payload last, so this is the hot path: it
// slices a 600-byte notification without parsing it.
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
	if bytes.IndexByte(b[start+1:i], closer) >= 0 && !closesAt(b, start, i, b[start], closer) {
		return 0, false
	}
	return i + 1, true
}

// closesAt reports whether the container opened at b[start] by open
// stays open until b[last], counting its kind of bracket outside strings
// (for well-formed text the other kind cannot change where it closes). It
// trusts the text to be well formed; TailValue's callers check what they
// rely on.
//
// Payloads nest few containers of their own kind among many bytes, so it
// hops from bracket to bracket with vectorised searches and tells a
// bracket inside a string by the parity of the quotes before it; that
// needs a span without escapes, and gives up to a byte loop past
// maxHops brackets.
func closesAt(b []byte, start, last int, open, close byte) bool {
	span := b[start+1 : last]
	if bytes.IndexByte(span, '\\') >= 0 {
		return closesAtLoop(b[:last], start, open, close)
	}
	depth, quotes, at := 1, 0, 0
	nextOpen, nextClose := bytes.IndexByte(span, open), bytes.IndexByte(span, close)
	for hops := 0; nextClose >= 0; hops++ {
		if hops == maxHops {
			return closesAtLoop(b[:last], start, open, close)
		}
		p, delta := nextClose, -1
		if nextOpen >= 0 && nextOpen < nextClose {
			p, delta = nextOpen, 1
		}
		quotes += bytes.Count(span[at:p], quote)
		at = p
		if quotes%2 == 0 {
			if depth += delta; depth == 0 {
				return false
			}
		}
		if delta > 0 {
			nextOpen = nextIndex(span, p, open)
		} else {
			nextClose = nextIndex(span, p, close)
		}
	}
	return true
}

// maxHops bounds closesAt's bracket hops before it switches to a loop.
const maxHops = 32

var quote = []byte{'"'}

// nextIndex returns the index of the first c in s after s[p], or -1.
func nextIndex(s []byte, p int, c byte) int {
	if n := bytes.IndexByte(s[p+1:], c); n >= 0 {
		return p + 1 + n
	}
	return -1
}

// closesAtLoop is closesAt one byte at a time, honouring escapes.
func closesAtLoop(b []byte, start int, open, close byte) bool {
	depth := 0
	for i := start; i < len(b); i++ {
		switch b[i] {
		case open:
			depth++
		case close:
			if depth--; depth == 0 {
				return false
			}
		case '"':
			for i++; i < len(b) && b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
		}
	}
	return depth == 1
}

// Uint parses the unsigned decimal integer b; ok is false for
// anything else (signs, fractions, exponents, overflow), as decoding it
// into a uint64 with encoding/json would fail.
func Uint(b []byte) (v uint64, ok bool) {
	if len(b) == 0 || len(b) > 20 || (b[0] == '0' && len(b) > 1) {
		return 0, false
	}
	if len(b) < 20 { // 19 digits fit: no overflow to check (a stamp, an id)
		for _, c := range b {
			d := c - '0'
			if d > 9 {
				return 0, false
			}
			v = v*10 + uint64(d)
		}
		return v, true
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

// First returns the first element of the array that starts at b[i], or
// nil when it is empty (a venue's data array of one item).
func First(b []byte, i int) ([]byte, error) {
	var first []byte
	err := Elements(b, i, func(elem []byte) bool { first = elem; return false })
	return first, err
}

// Elements calls fn with each element of the array that starts at b[i],
// stopping early when fn returns false. Each element is checked before
// fn sees it.
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

// Values reads the members of the object at b[i] until every one named
// in keys is found, setting vals[k] to the raw value of the first member
// named keys[k], or leaving it nil. It reports whether b[i] starts an
// object whose members scanned (up to where it stopped).
func Values(b []byte, i int, keys []string, vals [][]byte) bool {
	m := Object(b, i)
	found := 0
	for found < len(keys) {
		key, start, more := m.Next()
		if !more {
			return m.Err() == nil
		}
		end := m.Skip()
		for k, name := range keys {
			if vals[k] == nil && string(key) == name {
				vals[k] = b[start:end]
				found++
			}
		}
	}
	return true
}
