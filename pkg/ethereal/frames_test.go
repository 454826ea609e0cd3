package ethereal_test

import (
	"testing"

	"github.com/wsfan/wsfan/pkg/ethereal"
	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/protocol/protocoltest"
)

// frames are ethereal's frames in the spelling its servers send: the ones the
// reader classifies most. They seed the fuzz targets too.
var frames = []protocoltest.Frame{
	{Name: "book", Frame: []byte(`{"e":"L2Book","t":1737043200123,"data":{"s":"BTCUSD","t":1737043200123,"pt":1737043200023,"a":[["68013.0","0.4"],["68013.5","1.1"],["68014.0","0.25"]],"b":[["68012.5","1.25"],["68012.0","0.4"],["68011.5","2.1"]]}}`), Kind: protocol.KindNotification},
}

// seedFrames are frames' bytes.
var seedFrames = protocoltest.Seeds(frames)

// BenchmarkClassify times one Classify of each frame.
func BenchmarkClassify(b *testing.B) { protocoltest.BenchmarkClassify(b, ethereal.Protocol(), frames) }
