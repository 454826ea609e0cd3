package thalex

// readOnly are the reading methods of Thalex's API description (the
// "Market data" and "System" tags): they change nothing, so the client
// makes one again on the next connection when one dies under it.
// Trading, account and session methods are never made again.
var readOnly = map[string]bool{
	"public/instruments": true, "public/all_instruments": true, "public/instrument": true,
	"public/ticker": true, "public/index": true, "public/book": true, "public/system_info": true,
}
