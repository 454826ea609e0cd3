package kraken_test

import (
	"testing"

	"github.com/wsfan/wsfan/pkg/kraken"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// BenchmarkClassifyStamped is Classify of a documented book update and
// trade, plain and with the venue's stamp read (Frame.WantTime): the
// stamp's cost, picked up in the scan routing makes of the first item.
func BenchmarkClassifyStamped(b *testing.B) {
	frames := map[string][]byte{
		"book":  []byte(`{"channel":"book","type":"update","data":[{"symbol":"MATIC/USD","bids":[{"price":0.5657,"qty":1098.3947558}],"asks":[],"checksum":2114181697,"timestamp":"2023-10-06T17:35:55.440295Z"}]}`),
		"trade": []byte(`{"channel":"trade","type":"update","data":[{"symbol":"MATIC/USD","side":"sell","price":0.5117,"qty":40.0,"ord_type":"market","trade_id":4665906,"timestamp":"2023-09-25T07:49:37.708706Z"}]}`),
	}
	p := kraken.Protocol()
	for _, name := range []string{"book", "trade"} {
		for _, want := range []bool{false, true} {
			b.Run(name+map[bool]string{false: "/plain", true: "/stamped"}[want], func(b *testing.B) {
				frame := frames[name]
				var f protocol.Frame
				f.WantTime = want
				b.SetBytes(int64(len(frame)))
				b.ReportAllocs()
				for b.Loop() {
					if err := p.Classify(frame, &f); err != nil || (want && f.Time == 0) {
						b.Fatal(err, f.Time)
					}
				}
			})
		}
	}
}
