package protocol

import (
	"github.com/wsfan/wsfan/internal/jsonscan"
)

// Exchanges write notifications in one fixed, compact layout. FastNotify
// recognises that layout with two prefix compares and a scan of the key,
// and slices the payload from the frame's tail, so a ticker is classified
// without parsing its payload. Any other layout (whitespace, reordered
// keys, escapes in the key) returns false and goes through the general
// scanner, which answers the same for every spelling of the frame.
//
// The frame must read prefix + KEY + `"` + mid + PAYLOAD + closing braces,
// where closers is how many braces close the frame after the payload and
// KEY holds no byte a JSON string must escape.
func FastNotify(frame []byte, prefix, mid string, closers int, f *Frame) bool {
	if len(frame) < len(prefix)+len(mid)+4 || string(frame[:len(prefix)]) != prefix {
		return false
	}
	rest := frame[len(prefix):]
	q := jsonscan.PlainLen(rest)
	if q >= len(rest) || rest[q] != '"' {
		return false
	}
	after := rest[q+1:]
	if len(after) < len(mid) || string(after[:len(mid)]) != mid {
		return false
	}
	start := len(frame) - len(after) + len(mid)
	end, ok := jsonscan.TailValue(frame, start, closers)
	if !ok {
		return false
	}
	f.Key = rest[:q]
	f.Data = frame[start:end]
	return true
}
