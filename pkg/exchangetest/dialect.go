package exchangetest

import (
	"github.com/wsfan/wsfan/pkg/protocol"
)

// Dialect is the wire protocol a Server speaks, by its registered name
// (protocol.ByName), such as thalex.Name: importing an exchange package
// registers it. The wire format is the exchange package's server half,
// and what its servers do beyond it (logins, refusals, feeds) is its
// venue.Exchange.
type Dialect string

// String returns the dialect's name.
func (d Dialect) String() string { return string(d) }

// ParseDialect returns the registered dialect named s (case-insensitive).
func ParseDialect(s string) (Dialect, error) {
	wire, err := protocol.ServerByName(s)
	if err != nil {
		return "", err
	}
	return Dialect(wire.Name()), nil
}
