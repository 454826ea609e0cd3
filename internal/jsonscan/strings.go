package jsonscan

import (
	"bytes"
	"unicode/utf16"
	"unicode/utf8"
)

// String returns the contents of the JSON string value v (with its
// quotes), as encoding/json decodes it. A string without escapes is
// returned as a slice of v; one with escapes is decoded into buf, which
// is grown when too small. ok is false when v is not a string.
func String(v, buf []byte) (s []byte, ok bool) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return nil, false
	}
	s = v[1 : len(v)-1]
	if bytes.IndexByte(s, '\\') < 0 {
		return s, true
	}
	s, _ = appendUnescaped(buf[:0], s, -1)
	return s, true
}

// AppendString appends the decoded contents of the JSON string value v
// (with its quotes) to dst; ok is false when v is not a string.
func AppendString(dst, v []byte) (out []byte, ok bool) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return dst, false
	}
	out, _ = appendUnescaped(dst, v[1:len(v)-1], -1)
	return out, true
}

// StringIs reports whether the JSON string value v (with its quotes)
// decodes to name, which must be at most 16 bytes long. It allocates
// nothing.
func StringIs(v []byte, name string) bool {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return false
	}
	s := v[1 : len(v)-1]
	if bytes.IndexByte(s, '\\') < 0 {
		return string(s) == name
	}
	// An escape is at most 6 bytes for 1 decoded byte, so a longer
	// string cannot decode to name.
	var buf [6 * 16]byte
	if len(s) > len(buf) || len(name) > 16 {
		return false
	}
	dec, _ := appendUnescaped(buf[:0], s, -1)
	return string(dec) == name
}

// appendUnescaped appends the string contents s, whose escapes the
// scanner has checked, decoded as encoding/json decodes them: a \u escape
// of half a surrogate pair that has no other half becomes U+FFFD. With a
// limit >= 0, it stops and reports false once the decoded text would pass
// limit bytes, and appends at most limit+4 bytes to dst.
func appendUnescaped(dst, s []byte, limit int) ([]byte, bool) {
	base := len(dst)
	for len(s) > 0 {
		n := bytes.IndexByte(s, '\\')
		if n < 0 {
			n = len(s)
		}
		if limit >= 0 && len(dst)-base+n > limit {
			return dst, false
		}
		dst = append(dst, s[:n]...)
		s = s[n:]
		if len(s) < 2 {
			return append(dst, s...), true // unreachable for checked text
		}
		switch c := s[1]; c {
		case 'b':
			dst, s = append(dst, '\b'), s[2:]
		case 'f':
			dst, s = append(dst, '\f'), s[2:]
		case 'n':
			dst, s = append(dst, '\n'), s[2:]
		case 'r':
			dst, s = append(dst, '\r'), s[2:]
		case 't':
			dst, s = append(dst, '\t'), s[2:]
		case 'u':
			r := rune(-1)
			if len(s) >= 6 {
				r = hex4(s[2:6])
			}
			if r < 0 {
				return append(dst, s...), true // unreachable for checked text
			}
			s = s[6:]
			if utf16.IsSurrogate(r) {
				r2 := rune(-1)
				if len(s) >= 6 && s[0] == '\\' && s[1] == 'u' {
					r2 = hex4(s[2:6])
				}
				if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
					r, s = dec, s[6:]
				} else {
					r = utf8.RuneError
				}
			}
			dst = utf8.AppendRune(dst, r)
		default: // '"', '\\', '/'
			dst, s = append(dst, c), s[2:]
		}
	}
	return dst, limit < 0 || len(dst)-base <= limit
}
