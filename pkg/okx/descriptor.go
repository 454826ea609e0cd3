package okx

import (
	"time"

	"github.com/wsfan/wsfan/pkg/protocol"
)

// descriptor is what OKX is: its request and connection budgets (limits.go);
// its keepalive, "ping" answered "pong", which the client sends every
// 15 s where OKX closes a connection that received nothing for 30 s and
// asks for a ping after at most N < 30 s without a message ("The
// connection will break automatically if the subscription is not
// established or data has not been pushed for more than 30 seconds",
// https://www.okx.com/docs-v5/en/#overview-websocket-connect); its
// answers, one frame for each topic of a request (protocol.go's
// AckedTopic and RefusedTopic), and to operations without an id too
// (the overview's unsubscribe and login examples carry none).
var descriptor = protocol.Venue{
	Limits:     []protocol.Limit{RequestLimit, ConnectLimit},
	AnswersAll: true,
	Keepalive: protocol.Keepalive{
		Interval:  15 * time.Second,
		Frame:     []byte("ping"),
		IdleLimit: 30 * time.Second,
	},
	Errors:    dialect{},
	Messages:  rules{},
	TopicAcks: dialect{},
}

// rules reads OKX's messages (identity.go).
type rules struct{ protocol.ReadsNothing }

// Venue is OKX's.
func (dialect) Venue() protocol.Venue { return descriptor }

// Venue is OKX's.
func (server) Venue() protocol.Venue { return descriptor }
