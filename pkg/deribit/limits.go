package deribit

import "github.com/wsfan/wsfan/pkg/protocol"

// SubscribeLimit is Deribit's own limit on subscription requests, the
// same for every account (Deribit's "Rate Limits" article, support
// center and docs.deribit.com/articles/rate-limits: public/subscribe and
// private/subscribe cost 3,000 credits a request from a pool of at most
// 30,000, refilled at 10,000 a second: bursts of 10, then about 3.3
// requests a second). Over it Deribit answers 10028 too_many_requests and
// may end the session. The unsubscribe methods are charged alike: the
// article does not say, and the cautious choice costs a program nothing
// it would notice. The client keeps this limit by default
// (protocol.Venue.Limits), with a tenth to spare (ClientSubscribeLimit);
// client.WithRateLimit replaces it. The general pool (500 credits a
// request, its size and refill by account tier) is not kept by default:
// set it with client.WithRateLimit for your tier.
var SubscribeLimit = protocol.Limit{Rate: 10_000, Burst: 30_000, Cost: subscribeCost}

// ClientSubscribeLimit is what the client keeps of SubscribeLimit: 90 %
// of its refill and its burst. Requests the client spaced can arrive
// closer together (a delayed one catching up with the next), and the
// exchange counts them as they arrive.
var ClientSubscribeLimit = protocol.Limit{Rate: 9_000, Burst: 27_000, Cost: subscribeCost}

// subscribeCost charges the subscription requests 3,000 credits and
// leaves every other request to the general pool.
func subscribeCost(method string) int {
	switch method {
	case protocol.SubscribeMethod, protocol.UnsubscribeMethod,
		"public/subscribe", "private/subscribe", "public/unsubscribe", "private/unsubscribe":
		return 3_000
	}
	return 0
}

// ConnectionsPerIP is Deribit's cap on the open connections of one IP
// address, WebSocket and HTTP alike ("Connection Management Best
// Practices", docs.deribit.com/articles/connection-management-best-practices:
// the 33rd is refused with HTTP 429). A pool.Pool opens none past it.
const ConnectionsPerIP = 32
