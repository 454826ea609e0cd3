package kraken

import "github.com/wsfan/wsfan/pkg/protocol"

// ConnectLimit is the pace of new connections the client keeps for a
// Kraken host, shared by every client of the process
// (protocol.ConnectMethod): "Cloudflare imposes a connection/re-connection
// rate limit — per Internet Protocol (IP) address — of approximately 150
// attempts per rolling 10 minutes. If the reconnection rate limit is
// exceeded, the IP address is banned for 10 minutes"
// (https://docs.kraken.com/api/docs/guides/spot-ws-intro). A bucket of
// 75 connections refilled at 75 every 10 minutes never lets more than
// 150 into any 10 minutes, however the window is aligned: a Pool's
// connections and the reconnects after an outage alike. It is kept
// whatever client.WithRateLimit sets; other processes on the same IP are
// not counted.
//
// Kraken documents no fixed budget for the requests of a connection (its
// rate limit on messages depends on the load, "EGeneral:Too many
// requests" past it) and keeps its trading limits per account tier and
// pair; neither is paced by default: set one with client.WithRateLimit.
var ConnectLimit = protocol.Limit{Rate: 75.0 / 600, Burst: 75, Cost: connectCost}

// connectCost charges a new connection 1 credit and nothing else.
func connectCost(method string) int {
	if method == protocol.ConnectMethod {
		return 1
	}
	return 0
}
