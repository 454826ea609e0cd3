package kraken

import (
	"time"

	"github.com/wsfan/wsfan/pkg/protocol"
)

// descriptor is what Kraken is: its pace of new connections (limits.go); a
// ping, {"method":"ping"} without req_id, every 30 s, where Kraken sends
// a heartbeat about once a second on a subscribed connection
// (https://docs.kraken.com/api/docs/websocket-v2/heartbeat) and asks for
// an application ping to keep one without subscriptions alive
// (https://docs.kraken.com/api/docs/websocket-v2/ping), documenting no
// idle limit; answers to requests without req_id too ("Optional client
// originated request identifier sent as acknowledgment in the
// response"), one frame for each topic of a request (protocol.go's
// AckedTopic and RefusedTopic); a book whose checksum fails again right
// after its fresh snapshot resubscribed after 1 s, then 2 s, doubling to
// 30 s, so a pair whose books keep failing (a precision changed under
// them) does not spend the connection's subscribe budget at the pace of
// its snapshots; the dead man's switch, a session setting
// (deadman.go); and its market data's copy layout, for a hot standby
// (copies.go).
var descriptor = protocol.Venue{
	Limits:     []protocol.Limit{ConnectLimit},
	AnswersAll: true,
	Keepalive:  protocol.Keepalive{Interval: 30 * time.Second, Frame: []byte(keepalivePing)},
	Resync:     protocol.Backoff{First: time.Second, Most: 30 * time.Second},
	Methods:    dialect{},
	TopicAcks:  dialect{},
	Messages:   messages{},
}

// Venue is Kraken's.
func (dialect) Venue() protocol.Venue { return descriptor }

// Venue is Kraken's.
func (server) Venue() protocol.Venue { return descriptor }
