package protocol_test

import (
	"testing"

	"github.com/wsfan/wsfan/pkg/deribit"
	"github.com/wsfan/wsfan/pkg/ethereal"
	"github.com/wsfan/wsfan/pkg/ethereum"
	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// classifyBenchFrames are each dialect's notification in the spelling its
// servers send, plus a response: the frames the reader classifies most.
var classifyBenchFrames = []struct {
	name  string
	proto protocol.Protocol
	frame []byte
	kind  protocol.Kind
}{
	{"thalex-ticker", thalex.Protocol(), []byte(`{"channel_name":"ticker.BTC-PERPETUAL.raw","notification":{"best_bid_price":68012.5,"best_bid_amount":1.25,"best_ask_price":68013.0,"best_ask_amount":0.4,"last_price":68012.5,"mark_price":68012.81,"mark_timestamp":1737043200.123456,"iv":0.0,"delta":1.0,"volume_24h":12504.22,"value_24h":850304112.5,"low_price_24h":66850.0,"high_price_24h":68420.5,"change_24h":1.84,"index":68009.74,"forward":68011.2,"funding_mark":0.00001234,"funding_rate":0.0000125,"collar_low":66652.1,"collar_high":69373.5,"realised_funding_24h":0.00031,"average_funding_rate_24h":0.0000129,"open_interest":8421.7}}`), protocol.KindNotification},
	{"thalex-response", thalex.Protocol(), []byte(`{"id":12345,"result":["ticker.BTC-PERPETUAL.raw"]}`), protocol.KindResponse},
	{"deribit-book", deribit.Protocol(), []byte(`{"jsonrpc":"2.0","method":"subscription","params":{"channel":"book.BTC-PERPETUAL.100ms","data":{"type":"change","timestamp":1737043200123,"prev_change_id":31479339296,"instrument_name":"BTC-PERPETUAL","change_id":31479339507,"bids":[["new",68012.5,1250.0],["change",68012.0,400.0]],"asks":[["delete",68013.0,0.0]]}}}`), protocol.KindNotification},
	{"deribit-ticker", deribit.Protocol(), []byte(`{"jsonrpc":"2.0","method":"subscription","params":{"channel":"ticker.BTC-PERPETUAL.100ms","data":{"timestamp":1737043200123,"stats":{"volume_usd":1.2e9,"volume":17500.5,"price_change":1.84,"low":66850.0,"high":68420.5},"state":"open","settlement_price":67900.1,"open_interest":1.1e9,"min_price":67000.0,"max_price":69000.0,"mark_price":68012.81,"last_price":68012.5,"instrument_name":"BTC-PERPETUAL","index_price":68009.74,"funding_8h":0.0001,"current_funding":0.00001,"best_bid_price":68012.5,"best_bid_amount":1250.0,"best_ask_price":68013.0,"best_ask_amount":400.0}}}`), protocol.KindNotification},
	{"ethereum-newheads", ethereum.Protocol(), []byte(`{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"0xcd0c3e8af590364c09d0fa6a1210faf5","result":{"parentHash":"0x9b3c0d4b1f6b2a4f1d5e7c8a9b0c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c","miner":"0x0000000000000000000000000000000000000000","number":"0x1b4","gasLimit":"0x1c9c380","gasUsed":"0x5208","timestamp":"0x6787a4c0","baseFeePerGas":"0x7"}}}`), protocol.KindNotification},
	{"ethereal-book", ethereal.Protocol(), []byte(`{"e":"L2Book","t":1737043200123,"data":{"s":"BTCUSD","t":1737043200123,"pt":1737043200023,"a":[["68013.0","0.4"],["68013.5","1.1"],["68014.0","0.25"]],"b":[["68012.5","1.25"],["68012.0","0.4"],["68011.5","2.1"]]}}`), protocol.KindNotification},
}

// BenchmarkClassify times one Classify of each dialect's common frames:
// what the reader spends before it looks a topic up.
func BenchmarkClassify(b *testing.B) {
	for _, bf := range classifyBenchFrames {
		b.Run(bf.name, func(b *testing.B) {
			var f protocol.Frame
			b.SetBytes(int64(len(bf.frame)))
			b.ReportAllocs()
			for b.Loop() {
				if err := bf.proto.Classify(bf.frame, &f); err != nil {
					b.Fatal(err)
				}
			}
			if f.Kind != bf.kind {
				b.Fatalf("classified as %v, want %v", f.Kind, bf.kind)
			}
		})
	}
}
