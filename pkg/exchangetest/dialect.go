package exchangetest

import (
	"time"

	"github.com/wsfan/wsfan/pkg/protocol"

	// The exchanges a Server emulates register their wire formats.
	_ "github.com/wsfan/wsfan/pkg/ethereal"
)

// Dialect is the wire protocol a Server speaks, by its registered name
// (protocol.ByName); the wire format itself is the exchange package's
// server half (protocol.ServerByName).
type Dialect string

// The dialects a Server speaks.
const (
	// Thalex is Thalex's JSON-RPC API: responses without "jsonrpc",
	// notifications {"channel_name":T,"notification":DATA}.
	Thalex Dialect = "thalex"
	// Deribit is Deribit's JSON-RPC v2 API: notifications
	// {"jsonrpc":"2.0","method":"subscription","params":{"channel":T,"data":DATA}}
	// and heartbeats; no batch arrays.
	Deribit Dialect = "deribit"
	// Ethereum is an Ethereum node's eth_subscribe API: subscription ids
	// per connection, JSON-RPC batch arrays.
	Ethereum Dialect = "ethereum"
	// Ethereal is Ethereal's event API: {"event":"subscribe","data":{...}}
	// without acknowledgements, notifications {"e":TYPE,"t":MS,"data":DATA}.
	Ethereal Dialect = "ethereal"
)

// String returns the dialect's lower-case name: "thalex", "deribit",
// "ethereum" or "ethereal".
func (d Dialect) String() string { return string(d) }

// ParseDialect returns the dialect named s (case-insensitive), as written by
// String.
func ParseDialect(s string) (Dialect, error) {
	wire, err := protocol.ServerByName(s)
	if err != nil {
		return "", err
	}
	return Dialect(wire.Name()), nil
}

// exchange is what one exchange (or node) adds to the wire format: its own
// methods, how it stamps its responses and how it refuses a request over
// the rate limit. Ethereal, which answers nothing, has none.
type exchange interface {
	// builtin answers the exchange's own requests (subscribe, login,
	// heartbeat); ok is false for others. It runs on c's reader goroutine
	// and may append to c.after.
	builtin(c *conn, req *protocol.Incoming) (result any, rerr *RPCError, ok bool)
	// appendResult appends the response carrying result (raw JSON) to the
	// request id, received at received.
	appendResult(dst, id, result []byte, received time.Time) []byte
	// throttled is the error refusing a request over the rate limit.
	throttled() *RPCError
}

// exchanges are the exchanges a Server emulates, by dialect.
var exchanges = map[Dialect]exchange{
	Thalex:   thalexExchange{},
	Deribit:  deribitExchange{},
	Ethereum: ethereumExchange{},
}
