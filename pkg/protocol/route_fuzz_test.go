package protocol_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"testing"
	"unicode/utf8"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/pkg/deribit"
	"github.com/wsfan/wsfan/pkg/ethereal"
	"github.com/wsfan/wsfan/pkg/ethereum"
	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// The differential fuzz targets check each dialect's key scanner against
// encoding/json on the same frame. For a frame encoding/json accepts, the
// scanner must answer exactly what a full parse implies (see the oracles
// below): kind, id, routing key (decoded) and the payload, result and
// error spans, whatever the spelling: key order, whitespace, escapes,
// repeated members (the last one counts, as encoding/json decodes them).
// Such a frame is also respelled (escapes, whitespace, member order) and
// the respelling checked the same way.
//
// For a frame encoding/json refuses, the scanner may still classify it
// only when the fault lies inside a payload or result it sliced from the
// frame's tail without reading it: with that span replaced by an empty
// value of its kind, the frame must be valid JSON and classify the same.
// An Ethereal notification's payload is the whole frame, so an invalid
// Ethereal frame is never a notification. Classify does not check UTF-8:
// keys are compared with invalid bytes read as U+FFFD, as encoding/json
// reads them.

func FuzzRouteThalex(f *testing.F)   { fuzzRoute(f, thalex.Protocol(), thalexOracle) }
func FuzzRouteDeribit(f *testing.F)  { fuzzRoute(f, deribit.Protocol(), deribitOracle) }
func FuzzRouteEthereum(f *testing.F) { fuzzRoute(f, ethereum.Protocol(), ethereumOracle) }
func FuzzRouteEthereal(f *testing.F) { fuzzRoute(f, ethereal.Protocol(), etherealOracle) }

// oracle classifies a frame encoding/json accepts.
type oracle func(frame []byte) route

func fuzzRoute(f *testing.F, p protocol.Protocol, o oracle) {
	for _, bf := range classifyBenchFrames {
		if bf.proto.Name() == p.Name() {
			f.Add(bf.frame)
		}
	}
	f.Fuzz(func(t *testing.T, frame []byte) {
		checkRoute(t, p, o, frame)
		if !json.Valid(frame) {
			return
		}
		for _, style := range []uint32{crc32.ChecksumIEEE(frame), styleAll} {
			if re, ok := respell(frame, style); ok {
				checkRoute(t, p, o, re)
			}
		}
	})
}

// route is a classification, the scanner's or the oracle's.
type route struct {
	Err    string // "", "unrecognized" or "malformed"
	Kind   protocol.Kind
	ID     uint64
	HasID  bool
	Key    string
	Data   string
	Result string
	Error  string
	Event  protocol.Event
}

func scanned(p protocol.Protocol, frame []byte) (route, *protocol.Frame) {
	var f protocol.Frame
	err := p.Classify(frame, &f)
	switch {
	case errors.Is(err, protocol.ErrUnrecognized):
		return route{Err: "unrecognized"}, &f
	case err != nil:
		return route{Err: "malformed"}, &f
	}
	return route{Kind: f.Kind, ID: f.ID, HasID: f.HasID, Key: jsonUTF8(f.Key), Data: string(f.Data),
		Result: string(f.Result), Error: string(f.Error), Event: f.Event}, &f
}

func checkRoute(t *testing.T, p protocol.Protocol, o oracle, frame []byte) {
	t.Helper()
	got, f := scanned(p, frame)
	if json.Valid(frame) {
		want := o(frame)
		require.Equal(t, want, got, "%s classified %q", p.Name(), frame)
		if got.Kind == protocol.KindBatch {
			checkBatch(t, p, o, frame)
		}
		return
	}
	if got.Err != "" {
		return
	}
	if got.Kind == protocol.KindBatch {
		require.Error(t, protocol.EachElement(frame, func([]byte) bool { return true }),
			"%s: the elements of an invalid batch %q", p.Name(), frame)
		return
	}
	// The fault must lie inside a span sliced from the tail.
	emptied := frame
	for _, s := range [][]byte{f.Data, f.Result} {
		if len(s) > 0 && len(s) < len(frame) && (s[0] == '{' || s[0] == '[') {
			emptied = replaceSpan(frame, s, s[:1], s[len(s)-1:])
		}
	}
	require.True(t, json.Valid(emptied), "%s classified invalid JSON %q as %v", p.Name(), frame, got.Kind)
	again, _ := scanned(p, emptied)
	require.Equal(t, []any{got.Kind, got.ID, got.HasID, got.Key}, []any{again.Kind, again.ID, again.HasID, again.Key},
		"%s: %q and its emptied form %q", p.Name(), frame, emptied)
}

// checkBatch compares a batch's elements, and their classification, with
// encoding/json's.
func checkBatch(t *testing.T, p protocol.Protocol, o oracle, frame []byte) {
	t.Helper()
	var want []json.RawMessage
	require.NoError(t, json.Unmarshal(frame, &want))
	if len(want) == 0 {
		want = nil
	}
	var got []json.RawMessage
	require.NoError(t, protocol.EachElement(frame, func(e []byte) bool {
		got = append(got, e)
		return true
	}))
	require.Equal(t, want, got, "%s: elements of %q", p.Name(), frame)
	for _, e := range got {
		checkRoute(t, p, o, e)
	}
}

// replaceSpan returns frame with its sub-slice s replaced by open+close.
func replaceSpan(frame, s, open, close []byte) []byte {
	at := int(uintptr(unsafe.Pointer(unsafe.SliceData(s))) - uintptr(unsafe.Pointer(unsafe.SliceData(frame))))
	out := append([]byte{}, frame[:at]...)
	out = append(append(out, open...), close...)
	return append(out, frame[at+len(s):]...)
}

// jsonUTF8 reads s as encoding/json reads a string: every byte that is
// not part of valid UTF-8 becomes U+FFFD.
func jsonUTF8(s []byte) string {
	if utf8.Valid(s) {
		return string(s)
	}
	var out []rune
	for len(s) > 0 {
		r, n := utf8.DecodeRune(s)
		out, s = append(out, r), s[n:]
	}
	return string(out)
}

// The oracles: what a full parse with encoding/json implies.

// members decodes a frame that is a JSON object; ok is false for any
// other value.
func members(v []byte) (map[string]json.RawMessage, bool) {
	v = bytes.TrimLeft(v, " \t\r\n")
	if len(v) == 0 || v[0] != '{' {
		return nil, false
	}
	var m map[string]json.RawMessage
	return m, json.Unmarshal(v, &m) == nil
}

func str(v json.RawMessage) (string, bool) {
	var s string
	return s, len(v) > 0 && v[0] == '"' && json.Unmarshal(v, &s) == nil
}

func uid(v json.RawMessage) (uint64, bool) {
	var u uint64
	return u, len(v) > 0 && v[0] >= '0' && v[0] <= '9' && json.Unmarshal(v, &u) == nil
}

var unrecognized = route{Err: "unrecognized"}

// response is a frame with "id", "result" or "error".
func response(m map[string]json.RawMessage) (route, bool) {
	id, hasID := m["id"]
	result, hasResult := m["result"]
	errObj, hasError := m["error"]
	if !hasID && !hasResult && !hasError {
		return unrecognized, false
	}
	r := route{Kind: protocol.KindResponse, Result: string(result), Error: string(errObj)}
	r.ID, r.HasID = uid(id)
	return r, true
}

// thalexOracle: a string "channel_name" with a "notification" is a
// notification (an event on the system channel, a reconnect when its
// "event" is "reconnect"); else a frame with "id", "result" or "error" is
// a response.
func thalexOracle(frame []byte) route {
	m, ok := members(frame)
	if !ok {
		return unrecognized
	}
	channel, isString := str(m["channel_name"])
	note, hasNote := m["notification"]
	if !isString || !hasNote {
		r, _ := response(m)
		return r
	}
	if channel != "system" {
		return route{Kind: protocol.KindNotification, Key: channel, Data: string(note)}
	}
	r := route{Kind: protocol.KindEvent, Key: channel, Data: string(note)}
	if n, ok := members(note); ok {
		if ev, _ := str(n["event"]); ev == "reconnect" {
			r.Event = protocol.EventReconnect
		}
	}
	return r
}

// rpcOracle: a frame with "method" is a request or notification, which
// the dialect's method function classifies from the method name and the
// params object; else a frame with "id", "result" or "error" is a
// response.
func rpcOracle(frame []byte, method func(name string, params map[string]json.RawMessage) route) route {
	m, ok := members(frame)
	if !ok {
		return unrecognized
	}
	raw, hasMethod := m["method"]
	if !hasMethod {
		r, _ := response(m)
		return r
	}
	name, ok := str(raw)
	if !ok {
		return unrecognized
	}
	params, _ := members(m["params"])
	return method(name, params)
}

// deribitOracle: method "subscription" with a string params.channel and a
// params.data is a notification; method "heartbeat" is an event, a
// heartbeat request when params.type is "test_request".
func deribitOracle(frame []byte) route {
	return rpcOracle(frame, func(name string, params map[string]json.RawMessage) route {
		switch name {
		case "subscription":
			channel, ok := str(params["channel"])
			data, hasData := params["data"]
			if !ok || !hasData {
				return unrecognized
			}
			return route{Kind: protocol.KindNotification, Key: channel, Data: string(data)}
		case "heartbeat":
			r := route{Kind: protocol.KindEvent, Data: string(params["type"])}
			if typ, _ := str(params["type"]); typ == "test_request" {
				r.Kind = protocol.KindHeartbeat
			}
			return r
		}
		return unrecognized
	})
}

// ethereumOracle: an array is a batch; method "eth_subscription" with a
// string params.subscription and a params.result is a notification.
func ethereumOracle(frame []byte) route {
	if v := bytes.TrimLeft(frame, " \t\r\n"); len(v) > 0 && v[0] == '[' {
		return route{Kind: protocol.KindBatch, Data: string(frame)}
	}
	return rpcOracle(frame, func(name string, params map[string]json.RawMessage) route {
		sub, ok := str(params["subscription"])
		result, hasResult := params["result"]
		if name != "eth_subscription" || !ok || !hasResult {
			return unrecognized
		}
		return route{Kind: protocol.KindNotification, Key: sub, Data: string(result)}
	})
}

// etherealSubaccountTypes mirrors the dialect's list of streams keyed by
// subaccount.
var etherealSubaccountTypes = map[string]bool{
	"OrderFill": true, "OrderUpdate": true, "SubaccountLiquidation": true,
	"TokenTransfer": true, "Position": true,
}

// etherealOracle: a string "e" with an object "data" is a notification of
// the topic e:ID, ID being data.subaccountId for subaccount streams and
// data.s (or data.symbol when there is no s) for the others, a string.
func etherealOracle(frame []byte) route {
	m, ok := members(frame)
	if !ok {
		return unrecognized
	}
	typ, ok := str(m["e"])
	data, isObject := members(m["data"])
	if !ok || !isObject {
		return unrecognized
	}
	idRaw, hasS := data["s"]
	if !hasS {
		idRaw = data["symbol"]
	}
	if etherealSubaccountTypes[typ] {
		idRaw = data["subaccountId"]
	}
	id, ok := str(idRaw)
	if !ok {
		return unrecognized
	}
	return route{Kind: protocol.KindNotification, Key: typ + ":" + id, Data: string(frame)}
}

// Respelling: the same document written another way.

// styleAll is the respelling with every option on.
const styleAll = 0xffffffff

// Respelling options, bits of a style.
const (
	styleSpace   = 1 << iota // whitespace between every token
	styleEscape              // every character of every string as \u escapes
	styleSome                // every other character escaped, '/' as \/
	styleReverse             // members in reverse order, where no key repeats
	styleUpper               // upper-case hex digits in \u escapes
)

// respell decodes frame token by token and writes it back in style; ok
// is false when the frame does not decode.
func respell(frame []byte, style uint32) ([]byte, bool) {
	dec := json.NewDecoder(bytes.NewReader(frame))
	dec.UseNumber()
	v, err := readValue(dec)
	if err != nil {
		return nil, false
	}
	var out bytes.Buffer
	v.write(&out, style)
	return out.Bytes(), true
}

// value is a decoded JSON value that keeps member order and repeats.
type value struct {
	tok     json.Token // scalar, or the opening json.Delim
	keys    []string
	members []*value
}

func readValue(dec *json.Decoder) (*value, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	v := &value{tok: tok}
	d, ok := tok.(json.Delim)
	if !ok {
		return v, nil
	}
	for dec.More() {
		if d == '{' {
			k, err := dec.Token()
			if err != nil {
				return nil, err
			}
			v.keys = append(v.keys, k.(string))
		}
		m, err := readValue(dec)
		if err != nil {
			return nil, err
		}
		v.members = append(v.members, m)
	}
	_, err = dec.Token() // the closing delimiter
	return v, err
}

func (v *value) write(out *bytes.Buffer, style uint32) {
	space := func() {
		if style&styleSpace != 0 {
			out.WriteString(" \n\t\r")
		}
	}
	switch tok := v.tok.(type) {
	case json.Delim:
		out.WriteByte(byte(tok))
		order := make([]int, len(v.members))
		for i := range order {
			order[i] = i
		}
		if style&styleReverse != 0 && uniqueKeys(v.keys) {
			for i := range order {
				order[i] = len(order) - 1 - i
			}
		}
		for n, i := range order {
			if n > 0 {
				out.WriteByte(',')
			}
			space()
			if tok == '{' {
				writeString(out, v.keys[i], style)
				space()
				out.WriteByte(':')
				space()
			}
			v.members[i].write(out, style)
			space()
		}
		if tok == '{' {
			out.WriteByte('}')
		} else {
			out.WriteByte(']')
		}
	case string:
		writeString(out, tok, style)
	case json.Number:
		out.WriteString(tok.String())
	case bool:
		fmt.Fprint(out, tok)
	case nil:
		out.WriteString("null")
	}
}

func uniqueKeys(keys []string) bool {
	seen := make(map[string]bool, len(keys))
	for _, k := range keys {
		if seen[k] {
			return false
		}
		seen[k] = true
	}
	return true
}

// writeString writes s as a JSON string, escaping as style says.
func writeString(out *bytes.Buffer, s string, style uint32) {
	hex := "\\u%04x"
	if style&styleUpper != 0 {
		hex = "\\u%04X"
	}
	out.WriteByte('"')
	n := 0
	for _, r := range s {
		n++
		escape := style&styleEscape != 0 || (style&styleSome != 0 && n%2 == 0)
		switch {
		case r == '/' && style&styleSome != 0:
			out.WriteString(`\/`)
		case escape && r > 0xffff:
			r -= 0x10000
			fmt.Fprintf(out, hex+hex, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
		case escape || r < 0x20:
			fmt.Fprintf(out, hex, r)
		case r == '"' || r == '\\':
			out.WriteByte('\\')
			out.WriteRune(r)
		default:
			out.WriteRune(r)
		}
	}
	out.WriteByte('"')
}
