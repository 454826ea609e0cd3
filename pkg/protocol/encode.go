package protocol

import "unicode/utf8"

const hexDigits = "0123456789abcdef"

// AppendJSONString appends s to dst as a JSON string: quotes, backslashes
// and control characters escaped, invalid UTF-8 replaced with U+FFFD, the
// rest as it is. It is the one quoter of every frame wsfan writes.
func AppendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r != utf8.RuneError || size != 1 {
				i += size
				continue
			}
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			if c >= utf8.RuneSelf { // invalid UTF-8 byte
				dst = append(dst, `\ufffd`...)
			} else {
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
		}
		i++
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// AppendJSONStrings appends ss as a JSON array of strings.
func AppendJSONStrings(dst []byte, ss []string) []byte {
	dst = append(dst, '[')
	for i, s := range ss {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = AppendJSONString(dst, s)
	}
	return append(dst, ']')
}

// Chunks calls fn for consecutive slices of at most size topics (all of
// them when size <= 0).
func Chunks(topics []*Topic, size int, fn func([]*Topic)) {
	if size <= 0 {
		size = len(topics)
	}
	for len(topics) > 0 {
		n := min(size, len(topics))
		fn(topics[:n:n])
		topics = topics[n:]
	}
}
