package protocol

// The method names a Limit's Cost is asked about for subscription
// requests and heartbeat replies (Deribit's public/test), whatever the
// dialect calls them, and for new connections.
const (
	SubscribeMethod      = "subscribe"
	UnsubscribeMethod    = "unsubscribe"
	HeartbeatReplyMethod = "heartbeat_reply"
	// ConnectMethod is a new connection: a Limit whose Cost charges it
	// paces the connections opened to a host (OKX: 3 a second an IP),
	// not requests. The client keeps it for the host, shared by every
	// client of the process, whatever client.WithRateLimit sets.
	ConnectMethod = "connect"
)

// Limit is a request budget an exchange documents: a bucket holding at
// most Burst credits, refilled at Rate credits a second, from which a
// request takes Cost(method) credits (client.RateLimit, which it
// becomes). A venue lists its own in Venue.Limits.
type Limit struct {
	Rate  float64
	Burst int
	// Cost is what a request of method costs: SubscribeMethod and
	// UnsubscribeMethod for subscription requests; 0 leaves a request to
	// other limits.
	Cost func(method string) int
}
