package ethereal

import "github.com/wsfan/wsfan/pkg/protocol"

// SubscribeLimit is the budget the client keeps for Ethereal's subscribe
// requests by default (protocol.Venue.Limits). Ethereal's system-limits page
// (https://docs.ethereal.trade/developer-guides/trading-api/system-limits)
// gives WebSocket streams a pool of 3,500 points per 5 minutes per IP,
// charged only when a connection is established and when a subscription
// is made. What one connection or one subscribe costs is in that page's
// table of points, which we could not retrieve: the cost of 1 point a
// subscribe request is our assumption, the least a subscribe can cost,
// so the pace kept is the fastest the budget could allow (3,500 requests
// at once, then 3,500 every 300 s: about 11.7 a second). Connections are
// not charged here (the client does not pace its dials), and neither
// are unsubscribes, which the page does not name. A program that knows
// the real costs, or shares its IP's budget with other programs, sets
// its own with client.WithRateLimit, which replaces this one.
var SubscribeLimit = protocol.Limit{Rate: 3500.0 / 300, Burst: 3500, Cost: subscribeCost}

// subscribeCost charges a subscribe request 1 point (assumed, see
// SubscribeLimit) and every other request nothing.
func subscribeCost(method string) int {
	if method == protocol.SubscribeMethod {
		return 1
	}
	return 0
}
