package deribit_test

import (
	"testing"

	"github.com/wsfan/wsfan/pkg/deribit"
	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/protocol/protocoltest"
)

// Deribit passes the conformance suite every exchange package runs.
func TestConformance(t *testing.T) {
	protocoltest.Run(t, suite)
}

// Its documented frames go through both halves.
func TestDocumentedFrames(t *testing.T) {
	protocoltest.RunCorpus(t, suite, "testdata/documented.txt")
}

// suite describes the exchange to the conformance suite.
var suite = protocoltest.Suite{
	Name:     deribit.Name,
	Protocol: func() protocol.Protocol { return deribit.Protocol() },
	Server:   deribit.Server,
	Topics:   []string{"ticker.BTC-PERPETUAL.100ms", "book.BTC-PERPETUAL.100ms"},
	Private:  "user.orders.BTC-PERPETUAL.raw",
	Payload: func(string) []byte {
		return []byte(`{"type":"change","change_id":5,"prev_change_id":4,"bids":[["new",68012.5,10.0]],"asks":[]}`)
	},
	Method: "public/get_time",
	Params: []byte(`{}`),
}
