package protocol

import "testing"

// TestFamily: each venue's topic spelling gives its channel family.
func TestFamily(t *testing.T) {
	for name, want := range map[string]string{
		"book.BTC-PERPETUAL.100ms":          "book",     // Deribit
		"ticker.BTC-PERPETUAL.1000ms":       "ticker",   // Thalex
		"user.orders.BTC-PERPETUAL.raw":     "user",     // Deribit private
		"tickers:BTC-USDT":                  "tickers",  // OKX
		"orders:instType=ANY":               "orders",   // OKX
		"account":                           "account",  // OKX, no instrument
		"L2Book:BTCUSD":                     "L2Book",   // Ethereal
		"book:BTC/USD:10":                   "book",     // Kraken
		"newHeads":                          "newHeads", // Ethereum
		`["logs",{"address":"0x1"}]`:        "logs",     // Ethereum params
		` [ "newPendingTransactions" ]`:     "newPendingTransactions",
		`[ "newPendingTransactions", true]`: "newPendingTransactions",
		`[1]`:                               "",
	} {
		if got := Family(name); got != want {
			t.Errorf("Family(%q) = %q, want %q", name, got, want)
		}
	}
}
