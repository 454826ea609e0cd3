// Package exchanges registers every exchange wsfan speaks. Importing it
// makes each one's dialect known to protocol.ByName and
// protocol.ServerByName, its test exchange to pkg/venue and
// pkg/exchangetest, and its order books to book.RulesFor:
//
//	import _ "github.com/wsfan/wsfan/pkg/exchanges"
//
// The sidecar and the example programs import it. Adding an exchange to
// them is one line here; a program that needs one exchange imports that
// exchange's package alone.
package exchanges

import (
	_ "github.com/wsfan/wsfan/pkg/deribit"
	_ "github.com/wsfan/wsfan/pkg/ethereal"
	_ "github.com/wsfan/wsfan/pkg/ethereum"
	_ "github.com/wsfan/wsfan/pkg/kraken"
	_ "github.com/wsfan/wsfan/pkg/okx"
	_ "github.com/wsfan/wsfan/pkg/thalex"
)
