package protocol

import (
	"math"

	"github.com/wsfan/wsfan/internal/jsonscan"
)

// A venue stamps its messages with its own clock, each in a member of
// the payload its documentation names (Deribit's timestamp, OKX's ts,
// Thalex's time, Ethereal's t, an Ethereum head's timestamp). A dialect
// reads it with one function of its own, used by its Classify (Frame.Time)
// and by its book rules alike; the helpers below are what those share.

// Member returns the value of the top-level member named key of the
// object data, its first occurrence, or, when data is an array (OKX's
// data, Deribit's trades), of its first element's; nil when there is
// none or data is malformed before the member.
//
// The walk stops at the member: what follows it is not checked, as the
// route checks no payload. A name repeated in one object so reads its
// first value, where encoding/json reads its last: RFC 8259 leaves a
// repeated name's meaning to the reader, I-JSON (RFC 7493) forbids it
// and encoding/json/v2 refuses it, and no venue sends one, while looking
// for a later one cost a search of the whole rest of the payload (most
// of the stamp's cost on a Deribit ticker: docs/latency.md).
func Member(data []byte, key string) []byte {
	i := jsonscan.SkipSpace(data, 0)
	if i < len(data) && data[i] == '[' {
		first, err := jsonscan.First(data, i)
		if err != nil || first == nil {
			return nil
		}
		data, i = first, 0
	}
	if v, ok := leading(data, i, key); ok {
		return v
	}
	m := jsonscan.Object(data, i)
	for k, start, ok := m.Next(); ok; k, start, ok = m.Next() {
		end := m.Skip()
		if string(k) == key {
			if m.Err() != nil {
				return nil
			}
			return data[start:end]
		}
	}
	return nil
}

// leading slices the value of the member named key when it is the first
// of the object that starts at data[i], its name spelled as key is,
// right after the brace (Deribit's ticker's stamp): what the walk finds
// there, without the walk's setup (half the cost of that stamp's read).
// ok is false when the object starts otherwise.
func leading(data []byte, i int, key string) (v []byte, ok bool) {
	j := i + 2 + len(key) // the name's closing quote
	if j+1 >= len(data) || data[i] != '{' || data[i+1] != '"' || data[j] != '"' || data[j+1] != ':' || string(data[i+2:j]) != key {
		return nil, false
	}
	start := jsonscan.SkipSpace(data, j+2)
	end, err := jsonscan.SkipValue(data, start)
	if err != nil {
		return nil, true
	}
	return data[start:end], true
}

// maxMillis is the largest count of milliseconds whose nanoseconds fit
// an int64 (the year 2262).
const maxMillis = math.MaxInt64 / 1_000_000

// Millis reads v, milliseconds since the Unix epoch as a JSON number of
// digits or a string of them (OKX's "ts"), as nanoseconds; ok is false
// for anything else, or a count past the year 2262.
func Millis(v []byte) (ns int64, ok bool) {
	if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
		v = v[1 : len(v)-1]
	}
	ms, ok := jsonscan.Uint(v)
	if !ok || ms > maxMillis {
		return 0, false
	}
	return int64(ms) * 1e6, true
}
