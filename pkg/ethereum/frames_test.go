package ethereum_test

import (
	"testing"

	"github.com/wsfan/wsfan/pkg/ethereum"
	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/protocol/protocoltest"
)

// frames are ethereum's frames in the spelling its servers send: the ones the
// reader classifies most. They seed the fuzz targets too.
var frames = []protocoltest.Frame{
	{Name: "newheads", Frame: []byte(`{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"0xcd0c3e8af590364c09d0fa6a1210faf5","result":{"parentHash":"0x9b3c0d4b1f6b2a4f1d5e7c8a9b0c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c","miner":"0x0000000000000000000000000000000000000000","number":"0x1b4","gasLimit":"0x1c9c380","gasUsed":"0x5208","timestamp":"0x6787a4c0","baseFeePerGas":"0x7"}}}`), Kind: protocol.KindNotification},
}

// seedFrames are frames' bytes.
var seedFrames = protocoltest.Seeds(frames)

// BenchmarkClassify times one Classify of each frame.
func BenchmarkClassify(b *testing.B) { protocoltest.BenchmarkClassify(b, ethereum.Protocol(), frames) }
