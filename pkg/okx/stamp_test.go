package okx_test

import (
	"testing"

	"github.com/wsfan/wsfan/pkg/okx"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// TestVenueTime: Classify reads a notification's stamp, as the venue
// documents it, only when asked (Frame.WantTime).
func TestVenueTime(t *testing.T) {
	p := okx.Protocol()
	for _, c := range []struct {
		frame string
		want  int64
	}{
		{`{"arg":{"channel":"trades","instId":"BTC-USDT"},"data":[{"instId":"BTC-USDT","tradeId":"130639474","px":"42219.9","sz":"0.12060306","side":"buy","ts":"1630048897897","count":"3","source":"0","seqId":1234}]}`, 1630048897897e6},
		{`{"arg":{"channel":"books","instId":"BTC-USDT"},"action":"update","data":[{"asks":[],"bids":[],"ts":"1597026383085","seqId":3}]}`, 1597026383085e6},
		{`{"arg":{"channel":"tickers","instId":"BTC-USDT"},"data":[]}`, 0},
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
