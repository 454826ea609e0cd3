package thalex

import "github.com/wsfan/wsfan/pkg/protocol"

// descriptor is what Thalex is: the rules it decides by.
var descriptor = protocol.Venue{
	Errors:   rules{},
	Methods:  rules{},
	Messages: rules{},
}

// rules is how Thalex decides: its error codes (protocol.go), its
// methods (readonly.go, cancelondisconnect.go) and the copies of its
// notifications (copies.go).
type rules struct{ protocol.ReadsNothing }

// ClassifyMethod tells the methods that only read, and
// cancel-on-disconnect.
func (rules) ClassifyMethod(method string, params []byte) protocol.MethodClass {
	c := protocol.MethodClass{ReadOnly: readOnly[method]}
	c.Session, c.IsSession = sessionSetting(method, params)
	return c
}

// Venue is Thalex's.
func (*dialect) Venue() protocol.Venue { return descriptor }

// Venue is Thalex's.
func (*server) Venue() protocol.Venue { return descriptor }
