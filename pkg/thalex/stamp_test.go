package thalex_test

import (
	"testing"

	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// TestVenueTime: Classify reads a notification's stamp, as the venue
// documents it, only when asked (Frame.WantTime).
func TestVenueTime(t *testing.T) {
	p := thalex.Protocol(thalex.WithNotices(false))
	for _, c := range []struct {
		frame string
		want  int64
	}{
		{`{"channel_name":"book.BTC-PERPETUAL.none.all.1000ms","notification":{"bid_changes":[[9121,54,53]],"time":1683901254.785744}}`, 1683901254785744000},
		{`{"channel_name":"ticker.BTC-PERPETUAL.raw","notification":{"mark_price":68012.81,"mark_timestamp":1737043200.123456}}`, 0},
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
