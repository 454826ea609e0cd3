package thalex_test

import (
	"testing"

	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/protocol/protocoltest"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// frames are thalex's frames in the spelling its servers send: the ones the
// reader classifies most. They seed the fuzz targets too.
var frames = []protocoltest.Frame{
	{Name: "ticker", Frame: []byte(`{"channel_name":"ticker.BTC-PERPETUAL.raw","notification":{"best_bid_price":68012.5,"best_bid_amount":1.25,"best_ask_price":68013.0,"best_ask_amount":0.4,"last_price":68012.5,"mark_price":68012.81,"mark_timestamp":1737043200.123456,"iv":0.0,"delta":1.0,"volume_24h":12504.22,"value_24h":850304112.5,"low_price_24h":66850.0,"high_price_24h":68420.5,"change_24h":1.84,"index":68009.74,"forward":68011.2,"funding_mark":0.00001234,"funding_rate":0.0000125,"collar_low":66652.1,"collar_high":69373.5,"realised_funding_24h":0.00031,"average_funding_rate_24h":0.0000129,"open_interest":8421.7}}`), Kind: protocol.KindNotification},
	{Name: "response", Frame: []byte(`{"id":12345,"result":["ticker.BTC-PERPETUAL.raw"]}`), Kind: protocol.KindResponse},
}

// seedFrames are frames' bytes.
var seedFrames = protocoltest.Seeds(frames)

// BenchmarkClassify times one Classify of each frame.
func BenchmarkClassify(b *testing.B) { protocoltest.BenchmarkClassify(b, thalex.Protocol(), frames) }
