package protocol_test

import (
	"encoding/json"
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
