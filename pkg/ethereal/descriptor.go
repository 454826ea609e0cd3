package ethereal

import "github.com/wsfan/wsfan/pkg/protocol"

// descriptor is what Ethereal is: its subscribe budget (limits.go), its
// services' silence on a subscribe they accept (protocol.go's
// acceptAfter), and what identifies its events (identity.go) and their
// copies (copies.go).
var descriptor = protocol.Venue{
	Limits:      []protocol.Limit{SubscribeLimit},
	AcceptAfter: acceptAfter,
	Messages:    rules{},
}

// rules reads Ethereal's events (identity.go, copies.go).
type rules struct{ protocol.ReadsNothing }

// Venue is Ethereal's.
func (dialect) Venue() protocol.Venue { return descriptor }

// Venue is Ethereal's.
func (server) Venue() protocol.Venue { return descriptor }

// AnswerKeepalive answers nothing: Ethereal has no keepalive frame of
// its own.
func (server) AnswerKeepalive([]byte) ([]byte, bool) { return nil, false }
