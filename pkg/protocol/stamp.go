package protocol

import (
	"bytes"
	"math"

	"github.com/wsfan/wsfan/internal/jsonscan"
)

// A venue stamps its messages with its own clock, each in a member of
// the payload its documentation names (Deribit's timestamp, OKX's ts,
// Thalex's time, Ethereal's t, an Ethereum head's timestamp). A dialect
// reads it with one function of its own, used by its Classify (Frame.Time)
// and by its book rules alike; the helpers below are what those share.

// Member returns the value of the top-level member named key of the
// object data, its last occurrence (as encoding/json decodes a repeated
// member), or, when data is an array (OKX's data, Deribit's trades), of
// its first element; nil when there is none or data is malformed before
// the member's last occurrence.
//
// The walk stops at the member when nothing after it could name another
// (no key's text, no escape: laterMember), so a stamp that leads its
// payload, as Deribit's ticker's does, costs a byte search of the rest
// rather than a scan of every member (about half as much:
// docs/latency.md); what follows it is then not checked, as the route
// checks no payload.
func Member(data []byte, key string) []byte {
	i := jsonscan.SkipSpace(data, 0)
	if i < len(data) && data[i] == '[' {
		first, err := jsonscan.First(data, i)
		if err != nil || first == nil {
			return nil
		}
		data, i = first, 0
	}
	var v []byte
	m := jsonscan.Object(data, i)
	for k, start, ok := m.Next(); ok; k, start, ok = m.Next() {
		end := m.Skip()
		if string(k) == key {
			v = data[start:end]
			if !laterMember(data[end:], key) {
				return v
			}
		}
	}
	if m.Err() != nil {
		return nil
	}
	return v
}

// laterMember reports whether rest may hold another member named key,
// at any depth: key's text between quotes, or an escape (an escaped name
// decodes to what the search cannot see). It searches for the key's last
// byte and its closing quote, a pair rarer in a payload than a name's
// letters, so the search seldom stops short.
func laterMember(rest []byte, key string) bool {
	if key == "" || bytes.IndexByte(rest, '\\') >= 0 {
		return true
	}
	end := [2]byte{key[len(key)-1], '"'}
	for i := 0; ; {
		j := bytes.Index(rest[i:], end[:])
		if j < 0 {
			return false
		}
		j += i
		if k := j + 1 - len(key); k >= 1 && rest[k-1] == '"' && string(rest[k:j+1]) == key {
			return true
		}
		i = j + 1
	}
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
