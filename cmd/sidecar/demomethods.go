package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/wsfan/wsfan/pkg/exchangetest"
)

// demoInstrument is an instrument as the demo's exchange describes it,
// with the fields programs read first, named as the dialect names them.
type demoInstrument struct {
	Name      string  `json:"instrument_name"`
	Kind      string  `json:"kind,omitempty"`    // Deribit
	Type      string  `json:"type,omitempty"`    // Thalex
	Product   string  `json:"product,omitempty"` // Thalex
	TickSize  float64 `json:"tick_size"`
	MinAmount float64 `json:"min_trade_amount,omitempty"`
	BaseCcy   string  `json:"base_currency,omitempty"`
}

// handleDemoMethods makes the demo exchange answer the calls the README
// and the examples make, so that trying them against the demo works:
// the instrument list and the server time of Thalex and Deribit, and an
// Ethereum node's chain id and block number.
func handleDemoMethods(srv *exchangetest.Server, instruments []string) {
	var ok *exchangetest.RPCError // no error
	switch srv.Dialect() {
	case exchangetest.Thalex:
		srv.Handle("public/instruments", func(json.RawMessage) (any, *exchangetest.RPCError) {
			out := make([]demoInstrument, len(instruments))
			for i, name := range instruments {
				base, _, _ := strings.Cut(name, "-")
				out[i] = demoInstrument{Name: name, Type: "perpetual", Product: "F" + base + "USD", TickSize: 1}
			}
			return out, ok
		})
		srv.Handle("public/system_info", func(json.RawMessage) (any, *exchangetest.RPCError) {
			return map[string]any{"environment": "demo", "api_version": "2.0"}, ok
		})
	case exchangetest.Deribit:
		srv.Handle("public/get_instruments", func(json.RawMessage) (any, *exchangetest.RPCError) {
			out := make([]demoInstrument, len(instruments))
			for i, name := range instruments {
				base, _, _ := strings.Cut(name, "-")
				out[i] = demoInstrument{Name: name, Kind: "future", TickSize: 0.5, MinAmount: 10, BaseCcy: base}
			}
			return out, ok
		})
		srv.Handle("public/get_time", func(json.RawMessage) (any, *exchangetest.RPCError) {
			return time.Now().UnixMilli(), ok
		})
	case exchangetest.Ethereum:
		srv.Handle("eth_chainId", func(json.RawMessage) (any, *exchangetest.RPCError) { return "0x1", ok })
		srv.Handle("eth_blockNumber", func(json.RawMessage) (any, *exchangetest.RPCError) {
			return fmt.Sprintf("%#x", time.Now().Unix()/12), ok // a block every 12 s
		})
	}
}
