package ethereal_test

import (
	"testing"

	"github.com/wsfan/wsfan/pkg/ethereal"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// TestVenueTime: Classify reads a notification's stamp, as the venue
// documents it, only when asked (Frame.WantTime).
func TestVenueTime(t *testing.T) {
	p := ethereal.Protocol()
	for _, c := range []struct {
		frame string
		want  int64
	}{
		{`{"e":"L2Book","t":1737043200123,"data":{"s":"BTCUSD","t":1737043200123,"pt":1737043200023,"a":[],"b":[]}}`, 1737043200123e6},
		{`{"e":"Ticker","t":1737043200124,"data":{"s":"ETHUSD","markPrice":"3200.05"}}`, 1737043200124e6},
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
