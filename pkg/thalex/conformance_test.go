package thalex_test

import (
	"testing"

	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/protocol/protocoltest"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// Thalex passes the conformance suite every exchange package runs.
func TestConformance(t *testing.T) {
	protocoltest.Run(t, suite)
}

// Its documented frames go through both halves.
func TestDocumentedFrames(t *testing.T) {
	protocoltest.RunCorpus(t, suite, "testdata/documented.txt")
}

// suite describes the exchange to the conformance suite.
var suite = protocoltest.Suite{
	Name:     thalex.Name,
	Protocol: func() protocol.Protocol { return thalex.Protocol() },
	Server:   thalex.Server,
	Topics:   []string{"ticker.BTC-PERPETUAL.raw", "book.BTC-PERPETUAL.none.10.100ms"},
	Private:  "account.orders",
	Payload:  func(string) []byte { return []byte(`{"mark_price":68000.5,"index":67990.1}`) },
	Method:   "public/instruments",
	Params:   []byte(`{}`),
}
