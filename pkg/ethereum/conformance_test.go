package ethereum_test

import (
	"testing"

	"github.com/wsfan/wsfan/pkg/ethereum"
	"github.com/wsfan/wsfan/pkg/protocol/protocoltest"
)

// Ethereum passes the conformance suite every exchange package runs.
func TestConformance(t *testing.T) {
	protocoltest.Run(t, suite)
}

// Its documented frames go through both halves.
func TestDocumentedFrames(t *testing.T) {
	protocoltest.RunCorpus(t, suite, "testdata/documented.txt")
}

// suite describes the exchange to the conformance suite.
var suite = protocoltest.Suite{
	Name:     ethereum.Name,
	Protocol: ethereum.Protocol,
	Server:   ethereum.Server,
	Topics:   []string{"newHeads", `["logs",{"address":"0x00000000000000000000000000000000000000a1"}]`},
	Payload:  func(string) []byte { return []byte(`{"number":"0x1b4","hash":"0x9b3c"}`) },
	Method:   "eth_blockNumber",
	Params:   []byte(`[]`),
}
