package client_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/wsfan/wsfan/pkg/client"
)

// tickerData is a Thalex ticker payload of ~600 bytes.
var tickerData = []byte(`{"instrument_name":"BTC-PERPETUAL","best_bid_price":68012.5,"best_bid_amount":1.25,"best_ask_price":68013.0,"best_ask_amount":0.4,"last_price":68012.5,"mark_price":68012.81,"mark_timestamp":1737043200.123456,"iv":0.0,"delta":1.0,"volume_24h":12504.22,"value_24h":850304112.5,"low_price_24h":66850.0,"high_price_24h":68420.5,"change_24h":1.84,"index":68009.74,"forward":68011.2,"funding_mark":0.00001234,"funding_rate":0.0000125,"collar_low":66652.1,"collar_high":69373.5,"realised_funding_24h":0.00031,"average_funding_rate_24h":0.0000129,"open_interest":8421.7}`)

type benchTicker struct {
	Name      string  `json:"instrument_name"`
	Bid       float64 `json:"best_bid_price"`
	Ask       float64 `json:"best_ask_price"`
	MarkPrice float64 `json:"mark_price"`
	Timestamp float64 `json:"mark_timestamp"`
}

// BenchmarkDecode decodes a ~600-byte ticker payload into a struct with
// one string: Decode (strings copied), DecodeZeroCopy, and encoding/json
// for reference.
func BenchmarkDecode(b *testing.B) {
	if err := client.Warm(benchTicker{}); err != nil {
		b.Fatal(err)
	}
	m := client.Message{Data: tickerData}
	for _, bc := range []struct {
		name   string
		decode func(*benchTicker) error
	}{
		{"Decode", func(v *benchTicker) error { return m.Decode(v) }},
		{"DecodeZeroCopy", func(v *benchTicker) error { return m.DecodeZeroCopy(v) }},
		{"encoding-json", func(v *benchTicker) error { return json.Unmarshal(m.Data, v) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(m.Data)))
			b.ReportAllocs()
			var v benchTicker
			for b.Loop() {
				if err := bc.decode(&v); err != nil {
					b.Fatal(err)
				}
			}
			if v.Name != "BTC-PERPETUAL" {
				b.Fatal(fmt.Sprint(v))
			}
		})
	}
}
