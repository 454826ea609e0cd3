package okx

import "github.com/wsfan/wsfan/pkg/protocol"

// RequestLimit is the budget the client keeps for OKX's subscription
// requests by default (protocol.Venue.Limits): "The total number of
// 'subscribe'/'unsubscribe'/'login' requests per connection is limited to
// 480 times per hour" (https://www.okx.com/docs-v5/en/#overview-websocket-connect).
// A bucket of 240 credits refilled at 240 an hour never lets more than
// 480 requests into any hour, however the venue's window is aligned; a
// request is one operation, whatever number of arguments it carries, so
// a restore of every topic costs one (or one per 64 KB frame). A
// program that shares no connection budget with others can widen it
// with client.WithRateLimit, which replaces this one.
var RequestLimit = protocol.Limit{Rate: 240.0 / 3600, Burst: 240, Cost: requestCost}

// ConnectLimit is the pace of new connections the client keeps for an
// OKX host, shared by every client of the process (protocol.ConnectMethod):
// "Connection limit: 3 requests per second (based on IP)"
// (https://www.okx.com/docs-v5/en/#overview-websocket-connect; the
// Chinese page: "连接限制：3 次/秒 (基于IP)"). One connection at a time,
// 2.5 a second: no four connections within 1.2 s, so any second OKX
// counts holds at most 3 even when the network delays one connection
// 200 ms more than the next. It covers first dials and reconnects alike
// (every connection of a Pool reconnecting at once after a 64008
// notice), and is kept whatever client.WithRateLimit sets. Other
// processes on the same IP are not counted.
var ConnectLimit = protocol.Limit{Rate: 2.5, Burst: 1, Cost: connectCost}

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

// connectCost charges a new connection 1 credit and nothing else.
func connectCost(method string) int {
	if method == protocol.ConnectMethod {
		return 1
	}
	return 0
}
