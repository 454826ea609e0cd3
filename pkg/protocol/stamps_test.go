package protocol_test

import (
	"encoding/json"
	"math"
	"net/http/httptest"
	"testing"

	"github.com/wsfan/wsfan/pkg/protocol"
)

// TestStampsRoundTrip: the member AppendStamps adds keeps the frame
// valid JSON, and CutStamps gives back the venue's frame and the stamps.
func TestStampsRoundTrip(t *testing.T) {
	s := protocol.Stamps{Venue: 1737043200123000000, Recv: 1737043200173000000, Send: 1737043200173021000}
	for _, frame := range []string{`{"channel_name":"ticker.BTC-PERPETUAL.raw","notification":{"a":1}}`, `{}`, "{\"e\":\"L2Book\"} \n"} {
		stamped := protocol.AppendStamps(nil, []byte(frame), s)
		var v map[string]json.RawMessage
		if err := json.Unmarshal(stamped, &v); err != nil || v["wsfan"] == nil {
			t.Fatalf("%s: %v", stamped, err)
		}
		cut, got, ok := protocol.CutStamps(stamped)
		if !ok || got != s {
			t.Fatalf("CutStamps(%s) = %+v, %v", stamped, got, ok)
		}
		var orig, back any
		_ = json.Unmarshal([]byte(frame), &orig)
		if err := json.Unmarshal(append(stamped[:cut:cut], '}'), &back); err != nil || !jsonEqual(orig, back) {
			t.Fatalf("cut %s, want %s (%v)", stamped[:cut], frame, err)
		}
	}
	if _, _, ok := protocol.CutStamps([]byte(`{"notification":{"wsfan":{"x":1}}}`)); ok {
		t.Fatal("a frame without the member was cut")
	}
}

// TestStampsHeadAndTail: a frame built once up to send_ns
// (AppendStampsHead) and completed at each client's write
// (AppendStampsTail) is valid JSON of a fixed length whatever the send
// time, its value padded with spaces, and CutStamps reads it.
func TestStampsHeadAndTail(t *testing.T) {
	frame := []byte(`{"channel_name":"ticker.BTC-PERPETUAL.raw","notification":{"a":1}}`)
	s := protocol.Stamps{Venue: 1737043200123000000, Recv: 1737043200173000000}
	head, ok := protocol.AppendStampsHead(nil, frame, s)
	if !ok {
		t.Fatal("an object was not stamped")
	}
	for _, send := range []int64{1737043200173021000, 42, 0, -5, math.MaxInt64} {
		stamped := protocol.AppendStampsTail(head[:len(head):len(head)], send)
		if len(stamped) != len(head)+protocol.StampsTailLen {
			t.Fatalf("send %d: %d bytes, want %d", send, len(stamped), len(head)+protocol.StampsTailLen)
		}
		if !json.Valid(stamped) {
			t.Fatalf("send %d: not JSON: %s", send, stamped)
		}
		want := s
		want.Send = max(send, 0)
		if _, got, ok := protocol.CutStamps(stamped); !ok || got != want {
			t.Fatalf("CutStamps(%s) = %+v, %v, want %+v", stamped, got, ok, want)
		}
	}
	s.Send = 1737043200173021000
	if got := protocol.AppendStampsTail(head[:len(head):len(head)], s.Send); string(got) != string(protocol.AppendStamps(nil, frame, s)) {
		t.Fatalf("head and tail %s, AppendStamps %s", got, protocol.AppendStamps(nil, frame, s))
	}
	if out, ok := protocol.AppendStampsHead(nil, []byte(`[1]`), s); ok || string(out) != `[1]` {
		t.Fatalf("a frame that is no object: %s, %v", out, ok)
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// TestWantsStamps: stamps are asked for alone or in a list, by header or
// query, beside gap notices.
func TestWantsStamps(t *testing.T) {
	for target, want := range map[string][2]bool{
		"/ws?notify=stamps":             {false, true},
		"/ws?notify=gaps,stamps":        {true, true},
		"/ws?notify=gaps":               {true, false},
		"/ws?notify=gaps&notify=stamps": {true, true},
		"/ws":                           {false, false},
	} {
		r := httptest.NewRequest("GET", target, nil)
		if got := [2]bool{protocol.WantsGapNotices(r), protocol.WantsStamps(r)}; got != want {
			t.Errorf("%s: gaps, stamps = %v, want %v", target, got, want)
		}
	}
	r := httptest.NewRequest("GET", "/ws", nil)
	r.Header.Set(protocol.NotifyHeader, "gaps, stamps")
	if !protocol.WantsStamps(r) || !protocol.WantsGapNotices(r) {
		t.Error("the header's list was not read")
	}
}

// FuzzCutStamps: any object with the member appended is cut back to
// itself and its stamps, and no frame makes CutStamps panic or cut past
// the frame.
func FuzzCutStamps(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `{}`, `{"a":{"b":[1,2]}} `, `{"wsfan":{"venue_ns":1,"recv_ns":2,"send_ns":3}}`, `{"x":"}}"}`} {
		f.Add([]byte(s), int64(1737043200123000000), int64(1737043200173000000), int64(0))
	}
	f.Fuzz(func(t *testing.T, frame []byte, venue, recv, send int64) {
		if cut, _, ok := protocol.CutStamps(frame); ok && (cut < 1 || cut >= len(frame)) {
			t.Fatalf("CutStamps(%q) cut at %d", frame, cut)
		}
		var obj map[string]json.RawMessage
		if json.Unmarshal(frame, &obj) != nil || obj == nil {
			return
		}
		s := protocol.Stamps{Venue: max(venue, 0), Recv: max(recv, 0), Send: max(send, 0)}
		stamped := protocol.AppendStamps(nil, frame, s)
		cut, got, ok := protocol.CutStamps(stamped)
		if !ok || got != s {
			t.Fatalf("CutStamps(%s) = %+v, %v, want %+v", stamped, got, ok, s)
		}
		var orig, back any
		_ = json.Unmarshal(frame, &orig)
		if err := json.Unmarshal(append(stamped[:cut:cut], '}'), &back); err != nil || !jsonEqual(orig, back) {
			t.Fatalf("cut %s, want %s (%v)", stamped[:cut], frame, err)
		}
	})
}
