package kraken

import (
	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/venue"
)

// exchange is how Kraken's Spot WebSocket v2 behaves beyond the wire
// format, for test servers and the sidecar's demo: the refusal of an
// unknown symbol ("Currency pair not supported", as the book page's
// failure example words it) and of a private channel without a token,
// its tokens (ServerLogin: any, unless a test gives its own), and a feed of tickers, trades and checksummed books (feed.go).
var exchange = &venue.Exchange{
	UnknownTopic:  &protocol.Error{Code: protocol.CodeInvalidParams, Message: "Currency pair not supported {0}"},
	LoginRequired: errInvalidToken,
	Login:         func() venue.Authenticator { return NewServerLogin("", "") },
	Feed:          func(seed uint64) venue.Simulation { return newFeed(seed) },
}
