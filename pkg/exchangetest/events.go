package exchangetest

import "github.com/wsfan/wsfan/pkg/protocol"

// serveEvents (un)subscribes the Ethereal topics of reqs at once and
// answers each event with a status frame, in order: {"ok":false,"code":…}
// for a refused one, as Ethereal's WebSocket page shows its refusal
// (https://docs.ethereal.trade/developer-guides/trading-api/websockets:
// {ok: false, code: "SUBSCRIPTION_LIMIT_EXCEEDED"}), and {"ok":true} for
// an accepted one (our inference from that shape; nothing under
// WithQuietAccepts). Refused are: a topic past WithTopicCap's
// per-connection limit, among those that count toward it
// (venue.Exchange.LimitedTopic), with the exchange's TopicLimit; a code of the server half's own for a topic the
// server does not take or a malformed event. Events other than
// (un)subscribes are ignored. It runs on c's reader goroutine.
func serveEvents(c *conn, reqs []protocol.Incoming, ferr *protocol.Error) {
	if ferr != nil {
		c.reply(c.s.wire.AppendError(nil, nil, ferr.Code, ferr.Message, nil))
		return
	}
	for _, req := range reqs {
		if req.Op != protocol.OpSubscribe && req.Op != protocol.OpUnsubscribe {
			continue
		}
		if req.Err != nil {
			c.reply(c.s.wire.AppendError(nil, nil, req.Err.Code, req.Err.Message, nil))
			continue
		}
		if req.Op == protocol.OpSubscribe && !c.allow(protocol.SubscribeMethod) { // a subscribe is charged (WithRateLimit)
			rerr := c.s.throttled()
			c.reply(c.s.wire.AppendError(nil, nil, rerr.Code, rerr.Message, nil))
			continue
		}
		join, rerr := serveEvent(c, &req)
		if rerr != nil {
			c.reply(c.s.wire.AppendError(nil, nil, rerr.Code, rerr.Message, nil))
			continue
		}
		if !c.s.cfg.quietAccepts {
			c.reply(c.s.wire.AppendResult(nil, nil, nil))
		}
		for _, topic := range join { // the status first, then the topic's data
			c.s.joinNow(c, topic)
		}
	}
}

// serveEvent runs one unsubscribe event, or checks one subscribe event
// and returns the topics to join, or tells why it is refused.
func serveEvent(c *conn, req *protocol.Incoming) (join []string, rerr *protocol.Error) {
	for _, topic := range req.Topics {
		if req.Op == protocol.OpUnsubscribe {
			c.s.removeSub(c, topic)
			continue
		}
		if !c.s.accepts(topic) {
			return nil, &protocol.Error{Code: -32000, Message: "subscription " + topic + " refused"}
		}
		if limit := c.s.cfg.topicCap; limit > 0 && c.s.limited(topic) && !c.s.subscribed(c, topic) && c.s.topicsOf(c) >= limit {
			if e := c.s.ex.TopicLimit; e != nil {
				return nil, &protocol.Error{Code: e.Code, Message: e.Message}
			}
			return nil, &protocol.Error{Code: -32000, Message: "too many subscriptions"}
		}
		join = append(join, topic)
	}
	return join, nil
}
