package deribit

import "strings"

// readOnly tells the market-data and other
// reading methods of Deribit's API (docs.deribit.com, "Market data" and
// "Supporting": public/get_*, public/ticker, public/test), which the
// client makes again on the next connection when one dies under them.
// Trading, account and session methods are never made again.
func readOnly(method string) bool {
	return strings.HasPrefix(method, "public/get_") || method == "public/ticker" || method == "public/test"
}
