package kraken

import (
	"github.com/wsfan/wsfan/pkg/book"
	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/venue"
)

// Name is the dialect's name, as protocol.ByName and the sidecar's
// -protocol take it.
const Name = "kraken"

// init registers the dialect: importing this package makes "kraken"
// known to protocol.ByName and protocol.ServerByName, its test exchange
// to venue.Lookup and its books to book.RulesFor.
func init() {
	protocol.Register(protocol.Dialect{Name: Name, Protocol: Protocol, Server: Server})
	venue.Register(Name, exchange)
	book.Register(Name, BookRules)
}
