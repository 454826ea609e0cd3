package deribit

import "github.com/wsfan/wsfan/pkg/protocol"

// descriptor is what Deribit is: its subscription budget (limits.go), its cap
// on an IP address's connections, and the rules it decides by.
var descriptor = protocol.Venue{
	Limits:           []protocol.Limit{ClientSubscribeLimit},
	ConnectionsPerIP: ConnectionsPerIP,
	Errors:           rules{},
	Methods:          rules{},
	Messages:         rules{},
}

// rules is how Deribit decides: its error codes (protocol.go), its
// methods (readonly.go, cancelondisconnect.go) and what its messages
// carry (identity.go, copies.go).
type rules struct{ protocol.ReadsNothing }

// ClassifyMethod tells the methods that only read, and cancel-on-
// disconnect of either scope.
func (rules) ClassifyMethod(method string, params []byte) protocol.MethodClass {
	c := protocol.MethodClass{ReadOnly: readOnly(method)}
	c.Session, c.IsSession = sessionSetting(method, params)
	c.Account = accountSetting(method, params)
	return c
}

// Venue is Deribit's, refusing a heartbeat interval below Deribit's
// minimum (WithHeartbeat).
func (d *dialect) Venue() protocol.Venue {
	v := descriptor
	v.Invalid = d.check()
	return v
}

// Venue is Deribit's.
func (*server) Venue() protocol.Venue { return descriptor }
