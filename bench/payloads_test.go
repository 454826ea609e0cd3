package bench

import (
	"encoding/json"
	"testing"
)

// TestPayloads checks that every fixture is valid JSON of the size the
// reports name, so the benchmarks measure what they claim.
func TestPayloads(t *testing.T) {
	sized := []struct {
		name     string
		b        []byte
		min, max int
	}{
		{"rpc", FrameRPC, 25, 40},
		{"ticker", FrameTicker, 90, 110},
		{"book", FrameBook, 270, 330},
		{"large", FrameLarge, 450, 560},
		{"newHeads frame", append(append([]byte(`{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"0x00000000000000000000000000000000","result":`), NewHeads...), "}}"...), 590, 640},
		{"small", Payload(100), 80, 120},
		{"medium", Payload(10 << 10), 9 << 10, 11 << 10},
		{"large payload", Payload(1 << 20), 1000 << 10, 1100 << 10},
	}
	for _, s := range sized {
		if !json.Valid(s.b) {
			t.Errorf("%s: invalid JSON", s.name)
		}
		if len(s.b) < s.min || len(s.b) > s.max {
			t.Errorf("%s: %d bytes, want %d-%d", s.name, len(s.b), s.min, s.max)
		}
	}
	var logs []Log
	if err := json.Unmarshal(Logs(100), &logs); err != nil || len(logs) != 100 || len(logs[99].Topics) != 3 {
		t.Fatalf("Logs(100): %d logs, err %v", len(logs), err)
	}
}
