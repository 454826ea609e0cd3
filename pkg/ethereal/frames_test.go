package ethereal_test

import (
	"testing"

	"github.com/wsfan/wsfan/pkg/ethereal"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// frames are ethereal's frames in the spelling its servers send: the ones the
// reader classifies most. They seed the fuzz targets too.
var frames = []struct {
	name  string
	frame []byte
	kind  protocol.Kind
}{
	{"book", []byte(`{"e":"L2Book","t":1737043200123,"data":{"s":"BTCUSD","t":1737043200123,"pt":1737043200023,"a":[["68013.0","0.4"],["68013.5","1.1"],["68014.0","0.25"]],"b":[["68012.5","1.25"],["68012.0","0.4"],["68011.5","2.1"]]}}`), protocol.KindNotification},
}

// seedFrames are frames' bytes.
var seedFrames = func() [][]byte {
	out := make([][]byte, len(frames))
	for i, f := range frames {
		out[i] = f.frame
	}
	return out
}()

// BenchmarkClassify times one Classify of each frame: what the reader
// spends before it looks a topic up.
func BenchmarkClassify(b *testing.B) {
	p := ethereal.Protocol()
	for _, bf := range frames {
		b.Run(bf.name, func(b *testing.B) {
			var f protocol.Frame
			b.SetBytes(int64(len(bf.frame)))
			b.ReportAllocs()
			for b.Loop() {
				if err := p.Classify(bf.frame, &f); err != nil {
					b.Fatal(err)
				}
			}
			if f.Kind != bf.kind {
				b.Fatalf("classified as %v, want %v", f.Kind, bf.kind)
			}
		})
	}
}
