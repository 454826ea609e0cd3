package ethereal

import (
	"github.com/wsfan/wsfan/pkg/book"
	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/venue"
)

// Name is the dialect's name, as protocol.ByName and the sidecar's
// -protocol take it.
const Name = "ethereal"

// init registers the dialect: importing this package makes "ethereal" known
// to protocol.ByName and protocol.ServerByName, and its books to
// book.RulesFor.
func init() {
	book.Register(Name, BookRules)
	protocol.Register(protocol.Dialect{Name: Name, Protocol: Protocol, Server: Server})
	venue.Register(Name, exchange)
}
