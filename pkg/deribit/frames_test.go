package deribit_test

import (
	"testing"

	"github.com/wsfan/wsfan/pkg/deribit"
	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/protocol/protocoltest"
)

// frames are deribit's frames in the spelling its servers send: the ones the
// reader classifies most. They seed the fuzz targets too.
var frames = []protocoltest.Frame{
	{Name: "book", Frame: []byte(`{"jsonrpc":"2.0","method":"subscription","params":{"channel":"book.BTC-PERPETUAL.100ms","data":{"type":"change","timestamp":1737043200123,"prev_change_id":31479339296,"instrument_name":"BTC-PERPETUAL","change_id":31479339507,"bids":[["new",68012.5,1250.0],["change",68012.0,400.0]],"asks":[["delete",68013.0,0.0]]}}}`), Kind: protocol.KindNotification},
	{Name: "ticker", Frame: []byte(`{"jsonrpc":"2.0","method":"subscription","params":{"channel":"ticker.BTC-PERPETUAL.100ms","data":{"timestamp":1737043200123,"stats":{"volume_usd":1.2e9,"volume":17500.5,"price_change":1.84,"low":66850.0,"high":68420.5},"state":"open","settlement_price":67900.1,"open_interest":1.1e9,"min_price":67000.0,"max_price":69000.0,"mark_price":68012.81,"last_price":68012.5,"instrument_name":"BTC-PERPETUAL","index_price":68009.74,"funding_8h":0.0001,"current_funding":0.00001,"best_bid_price":68012.5,"best_bid_amount":1250.0,"best_ask_price":68013.0,"best_ask_amount":400.0}}}`), Kind: protocol.KindNotification},
}

// seedFrames are frames' bytes.
var seedFrames = protocoltest.Seeds(frames)

// BenchmarkClassify times one Classify of each frame.
func BenchmarkClassify(b *testing.B) { protocoltest.BenchmarkClassify(b, deribit.Protocol(), frames) }
