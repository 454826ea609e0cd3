package protocoltest

import (
	"bytes"
	"encoding/json"

	"github.com/wsfan/wsfan/pkg/protocol"
)

// The oracles: what a full parse with encoding/json implies.

// Members decodes a frame that is a JSON object; ok is false for any
// other value.
func Members(v []byte) (map[string]json.RawMessage, bool) {
	v = bytes.TrimLeft(v, " \t\r\n")
	if len(v) == 0 || v[0] != '{' {
		return nil, false
	}
	var m map[string]json.RawMessage
	return m, json.Unmarshal(v, &m) == nil
}

// String decodes a JSON string.
func String(v json.RawMessage) (string, bool) {
	var s string
	return s, len(v) > 0 && v[0] == '"' && json.Unmarshal(v, &s) == nil
}

// Uint decodes a JSON unsigned integer.
func Uint(v json.RawMessage) (uint64, bool) {
	var u uint64
	return u, len(v) > 0 && v[0] >= '0' && v[0] <= '9' && json.Unmarshal(v, &u) == nil
}

// Unrecognized is the oracle's answer for a valid frame of no known shape.
var Unrecognized = Route{Err: "Unrecognized"}

// Response classifies a frame with "id", "result" or "error".
func Response(m map[string]json.RawMessage) (Route, bool) {
	id, hasID := m["id"]
	result, hasResult := m["result"]
	errObj, hasError := m["error"]
	if !hasID && !hasResult && !hasError {
		return Unrecognized, false
	}
	r := Route{Kind: protocol.KindResponse, Result: string(result), Error: string(errObj)}
	r.ID, r.HasID = Uint(id)
	return r, true
}

// RPCOracle: a frame with "method" is a request or notification, which
// the dialect's method function classifies from the method name and the
// params object; else a frame with "id", "result" or "error" is a
// response.
func RPCOracle(frame []byte, method func(name string, params map[string]json.RawMessage) Route) Route {
	m, ok := Members(frame)
	if !ok {
		return Unrecognized
	}
	raw, hasMethod := m["method"]
	if !hasMethod {
		r, _ := Response(m)
		return r
	}
	name, ok := String(raw)
	if !ok {
		return Unrecognized
	}
	params, _ := Members(m["params"])
	return method(name, params)
}
