package protocoltest

import (
	"encoding/json"
	"errors"
	"hash/crc32"
	"testing"
	"unicode/utf8"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/pkg/protocol"
)

// FuzzClassify feeds arbitrary bytes to a dialect's classifier: it must
// never panic, every slice it returns must lie inside the frame (or the
// Frame), and a frame it calls a notification must have a key and a
// payload. Asked for the venue's stamp too (Frame.WantTime), it must
// classify the frame alike. What reads a notification's payload on the
// reader after it (the venue's MessageReader and Recoverer: identity,
// copy bytes, link, retraction, position) must not panic either, and
// the copy bytes must lie inside the frame. seeds start the corpus,
// beside the package's testdata/fuzz/FuzzClassify; every dialect's
// frames are seeds too, as a client may meet any of them.
func FuzzClassify(f *testing.F, p protocol.Protocol, seeds ...[]byte) {
	for _, s := range []string{
		`{"channel_name":"ticker.BTC-PERPETUAL.raw","notification":{"mark_price":68000.5}}`,
		`{"id":2,"result":["ticker.BTC-PERPETUAL.raw"]}`,
		`{"id":2,"error":{"code":4,"message":"throttle exceeded"}}`,
		`{"jsonrpc":"2.0","method":"subscription","params":{"channel":"book.X.100ms","data":{"change_id":1}}}`,
		`{"jsonrpc":"2.0","method":"heartbeat","params":{"type":"test_request"}}`,
		`[{"jsonrpc":"2.0","id":1,"result":"0x1"},{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"no"}}]`,
		`{"e":"L2Book","t":1,"data":{"s":"BTCUSD","t":2,"pt":1}}`,
		"{\"a\":\"\\\"\"}", `{"channel_name":"x","notification":}`, `{`, `"`, ``,
	} {
		f.Add([]byte(s))
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, frame []byte) {
		var fr protocol.Frame
		if p.Classify(frame, &fr) != nil {
			return
		}
		for _, s := range [][]byte{fr.Result, fr.Error, fr.Data} {
			if s != nil && !within(frame, s) {
				t.Fatalf("%s: slice %q is not part of the frame", p.Name(), s)
			}
		}
		if fr.Kind == protocol.KindNotification && (fr.Key == nil || fr.Data == nil) {
			t.Fatalf("%s: notification without key or data", p.Name())
		}
		if fr.Kind == protocol.KindBatch {
			_ = protocol.EachElement(frame, func(e []byte) bool {
				var el protocol.Frame
				_ = p.Classify(e, &el)
				return true
			})
		}
		_, _, _ = p.Sequence(frame)
		timed := protocol.Frame{WantTime: true}
		if err := p.Classify(frame, &timed); err != nil {
			t.Fatalf("%s: classified without the stamp, refused with it: %v", p.Name(), err)
		}
		if timed.Kind != fr.Kind || string(timed.Key) != string(fr.Key) || string(timed.Data) != string(fr.Data) {
			t.Fatalf("%s: asking for the stamp changed the frame's classification", p.Name())
		}
		if fr.Kind == protocol.KindNotification {
			readMessage(t, p, frame, fr)
		}
	})
}

// readMessage runs what the reader runs on a notification's payload
// after classifying it: the venue's message reader and recoverer.
func readMessage(t *testing.T, p protocol.Protocol, frame []byte, fr protocol.Frame) {
	v := p.Venue()
	if r := v.Messages; r != nil {
		_, _ = r.AppendIdentity(nil, fr.Data)
		if same, ok := r.CopyBytes(frame); ok && !within(frame, same) {
			t.Fatalf("%s: copy bytes %q are not part of the frame", p.Name(), same)
		}
		_, _, _, _ = r.Link(fr.Data)
		_ = r.Retracted(fr.Data)
	}
	if v.Recoverer != nil { // a topic of either kind: dense (heads), sparse (logs)
		for _, sparse := range []bool{false, true} {
			_, _ = v.Recoverer.Position(&protocol.Topic{Name: string(fr.Key), Backfill: true, Retracts: sparse}, fr.Data)
		}
	}
}

// within reports whether s is a sub-slice of frame: its bytes lie inside
// frame's backing array, not merely equal to some part of it.
func within(frame, s []byte) bool {
	if len(s) == 0 {
		return true
	}
	if len(frame) == 0 {
		return false
	}
	start := uintptr(unsafe.Pointer(unsafe.SliceData(frame)))
	at := uintptr(unsafe.Pointer(unsafe.SliceData(s)))
	return at >= start && at+uintptr(len(s)) <= start+uintptr(len(frame))
}

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

// Oracle classifies a frame encoding/json accepts, as the dialect's
// documentation implies from a full parse.
type Oracle func(frame []byte) Route

// FuzzRoute is the differential fuzz target of a dialect: p's Classify
// against o on every frame, and on respellings of the frames
// encoding/json accepts. seeds start the corpus, beside the package's
// testdata/fuzz/FuzzRoute.
func FuzzRoute(f *testing.F, p protocol.Protocol, o Oracle, seeds ...[]byte) {
	for _, s := range seeds {
		f.Add(s)
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

// Route is a classification, the scanner's or the Oracle's.
type Route struct {
	Err    string // "", "Unrecognized" or "malformed"
	Kind   protocol.Kind
	ID     uint64
	HasID  bool
	Key    string
	Data   string
	Result string
	Error  string
	Event  protocol.Event
	// Snapshot is the frame's own snapshot mark (Thalex's top-level
	// "snapshot":true).
	Snapshot bool
}

func scanned(p protocol.Protocol, frame []byte) (Route, *protocol.Frame) {
	var f protocol.Frame
	err := p.Classify(frame, &f)
	switch {
	case errors.Is(err, protocol.ErrUnrecognized):
		return Route{Err: "Unrecognized"}, &f
	case err != nil:
		return Route{Err: "malformed"}, &f
	}
	return Route{Kind: f.Kind, ID: f.ID, HasID: f.HasID, Key: jsonUTF8(f.Key), Data: string(f.Data),
		Result: string(f.Result), Error: string(f.Error), Event: f.Event, Snapshot: f.Snapshot}, &f
}

func checkRoute(t *testing.T, p protocol.Protocol, o Oracle, frame []byte) {
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
func checkBatch(t *testing.T, p protocol.Protocol, o Oracle, frame []byte) {
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
