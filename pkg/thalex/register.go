package thalex

import (
	"github.com/wsfan/wsfan/pkg/book"
	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/venue"
)

// Name is the dialect's name, as protocol.ByName and the sidecar's
// -protocol take it.
const Name = "thalex"

// init registers the dialect: importing this package makes "thalex" known
// to protocol.ByName and protocol.ServerByName, and its books to
// book.RulesFor.
func init() {
	book.Register(Name, BookRules)
	protocol.Register(protocol.Dialect{Name: Name, Protocol: func() protocol.Protocol { return Protocol() }, Server: Server})
	venue.Register(Name, exchange)
}
