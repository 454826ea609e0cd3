package okx_test

import (
	"testing"

	"github.com/wsfan/wsfan/pkg/okx"
	"github.com/wsfan/wsfan/pkg/protocol/protocoltest"
)

// OKX passes the conformance suite every exchange package runs.
func TestConformance(t *testing.T) {
	protocoltest.Run(t, suite)
}

// Its documented frames go through both halves.
func TestDocumentedFrames(t *testing.T) {
	protocoltest.RunCorpus(t, suite, "testdata/documented.txt")
}

// suite describes the exchange to the conformance suite.
var suite = protocoltest.Suite{
	Name:     okx.Name,
	Protocol: okx.Protocol,
	Server:   okx.Server,
	Topics:   []string{"tickers:BTC-USDT", "books:ETH-USDT", "trades:BTC-USDT"},
	Private:  "orders:instType=ANY",
	Payload: func(topic string) []byte {
		return []byte(`[{"instId":"BTC-USDT","ts":"1597026383085","seqId":7,"prevSeqId":6}]`)
	},
	Method:        "order",
	Params:        []byte(`[{"side":"buy","instId":"BTC-USDT","tdMode":"cash","ordType":"market","sz":"100"}]`),
	InvalidParams: okx.CodeInvalidArgs,
	NoErrorData:   true,
}
