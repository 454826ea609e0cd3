package exchangetest

import (
	"fmt"
	"strings"
)

// Dialect is the wire protocol a Server speaks.
type Dialect int

// The dialects a Server speaks. See DESIGN.md, section "Dialects".
const (
	// Thalex is Thalex's JSON-RPC API: responses without "jsonrpc",
	// notifications {"channel_name":T,"notification":DATA}.
	Thalex Dialect = iota + 1
	// Deribit is Deribit's JSON-RPC v2 API: notifications
	// {"jsonrpc":"2.0","method":"subscription","params":{"channel":T,"data":DATA}}
	// and heartbeats; no batch arrays.
	Deribit
	// Ethereum is an Ethereum node's eth_subscribe API: subscription ids
	// per connection, JSON-RPC batch arrays.
	Ethereum
	// Ethereal is Ethereal's event API: {"event":"subscribe","data":{...}}
	// without acknowledgements, notifications {"e":TYPE,"t":MS,"data":DATA}.
	Ethereal
)

var dialectNames = [...]string{
	Thalex:   "thalex",
	Deribit:  "deribit",
	Ethereum: "ethereum",
	Ethereal: "ethereal",
}

// String returns the dialect's lower-case name: "thalex", "deribit",
// "ethereum" or "ethereal".
func (d Dialect) String() string {
	if d >= Thalex && d <= Ethereal {
		return dialectNames[d]
	}
	return fmt.Sprintf("Dialect(%d)", int(d))
}

// ParseDialect returns the dialect named s (case-insensitive), as written by
// String.
func ParseDialect(s string) (Dialect, error) {
	for d := Thalex; d <= Ethereal; d++ {
		if strings.EqualFold(s, dialectNames[d]) {
			return d, nil
		}
	}
	return 0, fmt.Errorf("exchangetest: unknown dialect %q (want thalex, deribit, ethereum or ethereal)", s)
}
