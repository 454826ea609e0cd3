package okx

import "github.com/wsfan/wsfan/pkg/protocol"

// RequestLimit is the budget the client keeps for OKX's subscription
// requests by default (protocol.Paced): "The total number of
// 'subscribe'/'unsubscribe'/'login' requests per connection is limited to
// 480 times per hour" (https://www.okx.com/docs-v5/en/#overview-websocket-connect).
// A bucket of 240 credits refilled at 240 an hour never lets more than
// 480 requests into any hour, however the venue's window is aligned; a
// request is one operation, whatever number of arguments it carries, so
// a restore of every topic costs one (or one per 64 KB frame). A
// program that shares no connection budget with others can widen it
// with client.WithRateLimit, which replaces this one.
var RequestLimit = protocol.Limit{Rate: 240.0 / 3600, Burst: 240, Cost: requestCost}

// requestCost charges subscribe, unsubscribe and login 1 credit and any
// other operation nothing (order operations have limits of their own,
// per instrument, outside this one).
func requestCost(method string) int {
	switch method {
	case protocol.SubscribeMethod, protocol.UnsubscribeMethod, "login":
		return 1
	}
	return 0
}

// Limits implements protocol.Paced.
func (dialect) Limits() []protocol.Limit { return []protocol.Limit{RequestLimit} }

var _ protocol.Paced = dialect{}
