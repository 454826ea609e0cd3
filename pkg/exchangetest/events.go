package exchangetest

import "github.com/wsfan/wsfan/pkg/protocol"

// serveEvents (un)subscribes the Ethereal topics of reqs at once; refused
// topics, invalid requests and other events are ignored, as Ethereal
// acknowledges nothing. It runs on c's reader goroutine.
func serveEvents(c *conn, reqs []protocol.Incoming) {
	for _, req := range reqs {
		if req.Err != nil {
			continue
		}
		for _, topic := range req.Topics {
			switch req.Op {
			case protocol.OpSubscribe:
				if c.s.accepts(topic) {
					c.s.joinNow(c, topic)
				}
			case protocol.OpUnsubscribe:
				c.s.removeSub(c, topic)
			}
		}
	}
}
