package protocol_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/wsfan/wsfan/pkg/protocol"
)

// FuzzMember holds Member to encoding/json's decoder: for a valid
// object, or an array whose first element is one, the member's value is
// the value its first occurrence decodes to, whether nested members of
// that name, escaped names or repeated ones come before or after it.
func FuzzMember(f *testing.F) {
	for _, s := range []string{`{"ts":"1","ts":"2"}`, `[{"ts":"3"},{"ts":"4"}]`, `{"a":{"ts":1},"ts" : 5 }`, `[]`, `{"t\u0073":6}`, `{"ts":`,
		`{"ts":1,"a":{"ts":2},"ts":3}`, `{"ts":1,"t\u0073":2}`, `{"ts":1,"x":"ts","y":"\"ts\""}`, `[{"ts":7,"n":{"ts":8}},{"ts":9}]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return
		}
		got := protocol.Member(data, "ts")
		want, ok := firstMember(data, "ts")
		if !ok && got != nil || ok && !bytes.Equal(bytes.TrimSpace(want), got) {
			t.Fatalf("Member(%q) = %q, want %q", data, got, want)
		}
	})
}

// firstMember decodes valid JSON data with encoding/json's tokens and
// returns the value of the first top-level member named key of the
// object data, or of data's first element.
func firstMember(data []byte, key string) (json.RawMessage, bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err == nil && tok == json.Delim('[') {
		var first json.RawMessage
		if !dec.More() || dec.Decode(&first) != nil {
			return nil, false
		}
		dec = json.NewDecoder(bytes.NewReader(first))
		tok, err = dec.Token()
	}
	if err != nil || tok != json.Delim('{') {
		return nil, false
	}
	for dec.More() {
		name, err := dec.Token()
		var v json.RawMessage
		if err != nil || dec.Decode(&v) != nil {
			return nil, false
		}
		if name == key {
			return v, true
		}
	}
	return nil, false
}

// TestMemberTakesTheFirst: a name repeated in one object reads its first
// value, found without walking or searching what follows it.
func TestMemberTakesTheFirst(t *testing.T) {
	for data, want := range map[string]string{
		`{"ts":1,"ts":2}`:                `1`,
		`{"a":{"ts":0},"ts":3,"ts":4}`:   `3`,
		`[{"ts":"5","ts":"6"},{"ts":7}]`: `"5"`,
		`{"ts":8,"rest":[}`:              `8`, // what follows the member is not read
	} {
		if got := protocol.Member([]byte(data), "ts"); string(got) != want {
			t.Errorf("Member(%s) = %s, want %s", data, got, want)
		}
	}
}

// TestMillis reads milliseconds as a number or a string of digits.
func TestMillis(t *testing.T) {
	for v, want := range map[string]int64{`1630048897897`: 1630048897897e6, `"1630048897897"`: 1630048897897e6, `-1`: -1, `1.5`: -1, `"x"`: -1, `9223372036855`: -1} {
		ns, ok := protocol.Millis([]byte(v))
		if !ok {
			ns = -1
		}
		if ns != want {
			t.Errorf("Millis(%s) = %d, want %d", v, ns, want)
		}
	}
}
