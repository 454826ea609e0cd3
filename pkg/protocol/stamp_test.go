package protocol_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/wsfan/wsfan/pkg/protocol"
)

// FuzzMember holds Member to encoding/json: for a valid object, or an
// array whose first element is one, the member's value is what a decode
// finds (its last occurrence), whether the walk stops at the member (no
// later key's text, no escape) or goes on past a nested or repeated one.
func FuzzMember(f *testing.F) {
	for _, s := range []string{`{"ts":"1","ts":"2"}`, `[{"ts":"3"},{"ts":"4"}]`, `{"a":{"ts":1},"ts" : 5 }`, `[]`, `{"t\u0073":6}`, `{"ts":`,
		`{"ts":1,"a":{"ts":2},"ts":3}`, `{"ts":1,"t\u0073":2}`, `{"ts":1,"x":"ts","y":"\"ts\""}`, `[{"ts":7,"n":{"ts":8}},{"ts":9}]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got := protocol.Member(data, "ts")
		var obj map[string]json.RawMessage
		if json.Unmarshal(data, &obj) != nil {
			var arr []json.RawMessage
			if json.Unmarshal(data, &arr) != nil || len(arr) == 0 || json.Unmarshal(arr[0], &obj) != nil {
				return
			}
		}
		if want, ok := obj["ts"]; !ok && got != nil || ok && !bytes.Equal(bytes.TrimSpace(want), got) {
			t.Fatalf("Member(%q) = %q, want %q", data, got, want)
		}
	})
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
