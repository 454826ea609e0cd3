package kraken_test

import (
	"strings"
	"testing"

	"github.com/wsfan/wsfan/pkg/kraken"
	"github.com/wsfan/wsfan/pkg/protocol/protocoltest"
)

// Kraken passes the conformance suite every exchange package runs.
func TestConformance(t *testing.T) {
	protocoltest.Run(t, suite)
}

// Its documented frames go through both halves.
func TestDocumentedFrames(t *testing.T) {
	protocoltest.RunCorpus(t, suite, "testdata/documented.txt")
}

// suite describes the exchange to the conformance suite.
var suite = protocoltest.Suite{
	Name:     kraken.Name,
	Protocol: kraken.Protocol,
	Server:   kraken.Server,
	Topics:   []string{"ticker:BTC/USD", "book:ETH/USD:10", "trade:BTC/USD", "ohlc:BTC/USD:5", "instrument"},
	Private:  "executions",
	Payload: func(topic string) []byte {
		parts := strings.Split(topic, ":")
		if len(parts) == 1 {
			return []byte(`{"assets":[],"pairs":[{"symbol":"BTC/USD","price_precision":1,"qty_precision":8}]}`)
		}
		interval := ""
		if parts[0] == "ohlc" {
			interval = `,"interval":` + parts[2]
		}
		return []byte(`[{"symbol":"` + parts[1] + `"` + interval + `,"timestamp":"2023-10-06T17:35:55.440295Z"}]`)
	},
	Method:      "add_order",
	Params:      []byte(`{"order_type":"limit","side":"buy","limit_price":26500.4,"order_qty":1.2,"symbol":"BTC/USD","token":"G38a1tGFzqGiUCmnegBcm8d4nfP3tytiNQz6tkCBYXY"}`),
	NoErrorData: true,
	ErrorText:   true,
}
