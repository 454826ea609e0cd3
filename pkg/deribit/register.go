package deribit

import (
	"github.com/wsfan/wsfan/pkg/book"
	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/venue"
)

// Name is the dialect's name, as protocol.ByName and the sidecar's
// -protocol take it.
const Name = "deribit"

// init registers the dialect: importing this package makes "deribit" known
// to protocol.ByName and protocol.ServerByName, and its books to
// book.RulesFor.
func init() {
	protocol.Register(protocol.Dialect{Name: Name, Protocol: func() protocol.Protocol { return Protocol() }, Server: Server})
	venue.Register(Name, exchange)
	book.Register(Name, BookRules)
}
