package ethereal_test

import (
	"strings"
	"testing"

	"github.com/wsfan/wsfan/pkg/ethereal"
	"github.com/wsfan/wsfan/pkg/protocol/protocoltest"
)

// Ethereal passes the conformance suite every exchange package runs.
func TestConformance(t *testing.T) {
	protocoltest.Run(t, suite)
}

// Its documented frames go through both halves.
func TestDocumentedFrames(t *testing.T) {
	protocoltest.RunCorpus(t, suite, "testdata/documented.txt")
}

// suite describes the exchange to the conformance suite.
var suite = protocoltest.Suite{
	Name:     ethereal.Name,
	Protocol: ethereal.Protocol,
	Server:   ethereal.Server,
	Topics:   []string{"L2Book:BTCUSD", "Ticker:ETHUSD"},
	Payload: func(topic string) []byte {
		_, symbol, _ := strings.Cut(topic, ":")
		return []byte(`{"s":"` + symbol + `","t":2,"pt":1}`)
	},
	DataIsFrame: true,
}
