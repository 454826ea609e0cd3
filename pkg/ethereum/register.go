package ethereum

import (
	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/venue"
)

// Name is the dialect's name, as protocol.ByName and the sidecar's
// -protocol take it.
const Name = "ethereum"

// init registers the dialect: importing this package makes "ethereum" known
// to protocol.ByName and protocol.ServerByName.
func init() {
	protocol.Register(protocol.Dialect{Name: Name, Protocol: Protocol, Server: Server})
	venue.Register(Name, exchange)
}
