package deribit_test

import (
	"testing"

	"github.com/wsfan/wsfan/pkg/deribit"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// TestVenueTime: Classify reads a notification's stamp, as the venue
// documents it, only when asked (Frame.WantTime).
func TestVenueTime(t *testing.T) {
	p := deribit.Protocol()
	for _, c := range []struct {
		frame string
		want  int64
	}{
		{`{"jsonrpc":"2.0","method":"subscription","params":{"channel":"book.BTC-PERPETUAL.100ms","data":{"type":"change","timestamp":1554373911330,"change_id":2,"bids":[],"asks":[]}}}`, 1554373911330e6},
		{`{"jsonrpc":"2.0","method":"subscription","params":{"channel":"trades.BTC-PERPETUAL.raw","data":[{"trade_id":"1","timestamp":1590484156350,"price":9},{"timestamp":1590484156351}]}}`, 1590484156350e6},
		{`{"jsonrpc":"2.0","method":"subscription","params":{"channel":"ticker.BTC-PERPETUAL.raw","data":{"timestamp":1554373911331,"timestamp":1}}}`, 1554373911331e6}, // a repeated name reads its first value (protocol.Member),
		{`{"jsonrpc":"2.0","method":"subscription","params":{"channel":"user.portfolio.btc","data":{"equity":1}}}`, 0},
		{`{"jsonrpc":"2.0","method":"subscription","params":{"channel":"ticker.BTC-PERPETUAL.raw","data":{"timestamp":"soon"}}}`, 0},
	} {
		var f protocol.Frame
		if err := p.Classify([]byte(c.frame), &f); err != nil || f.Time != 0 {
			t.Fatalf("unasked: time %d, err %v: %s", f.Time, err, c.frame)
		}
		f.WantTime = true
		if err := p.Classify([]byte(c.frame), &f); err != nil || f.Time != c.want {
			t.Errorf("time %d, want %d (err %v): %s", f.Time, c.want, err, c.frame)
		}
	}
}
