package protocol

// The method names a Limit's Cost is asked about for subscription
// requests and heartbeat replies (Deribit's public/test), whatever the
// dialect calls them.
const (
	SubscribeMethod      = "subscribe"
	UnsubscribeMethod    = "unsubscribe"
	HeartbeatReplyMethod = "heartbeat_reply"
)

// Limit is a request budget an exchange documents: a bucket holding at
// most Burst credits, refilled at Rate credits a second, from which a
// request takes Cost(method) credits (client.RateLimit, which it
// becomes).
type Limit struct {
	Rate  float64
	Burst int
	// Cost is what a request of method costs: SubscribeMethod and
	// UnsubscribeMethod for subscription requests; 0 leaves a request to
	// other limits.
	Cost func(method string) int
}

// Paced is a Protocol whose exchange documents request limits that hold
// for every account, which the client keeps unless the program sets its
// own (client.WithRateLimit).
type Paced interface {
	Limits() []Limit
}
