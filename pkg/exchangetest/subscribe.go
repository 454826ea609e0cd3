package exchangetest

import (
	"encoding/json"

	"github.com/wsfan/wsfan/pkg/protocol"
)

// channelRequest answers the subscribe and unsubscribe requests of the
// channel dialects; ok is false for any other request.
func channelRequest(c *conn, req *protocol.Incoming) (result any, rerr *protocol.Error, ok bool) {
	switch req.Op {
	case protocol.OpSubscribe:
		result, rerr = subscribeChannels(c, req)
		return result, rerr, true
	case protocol.OpUnsubscribe:
		result, rerr = unsubscribeChannels(c, req)
		return result, rerr, true
	}
	return nil, nil, false
}

// subscribeChannels handles a channel subscribe request on c.s
// reader goroutine. The result is the accepted channels; refused channels,
// unknown ones and private ones requested without login or through the
// public method are omitted. The accepted channels are registered once the
// response is written.
func subscribeChannels(c *conn, req *protocol.Incoming) (any, *protocol.Error) {
	if limit := c.s.cfg.batchCap; limit > 0 && len(req.Topics) > limit {
		return nil, errTooMany
	}
	accepted := make([]string, 0, len(req.Topics))
	room := -1 // no cap
	if limit := c.s.cfg.topicCap; limit > 0 {
		room = limit - c.s.topicsOf(c)
	}
	for _, ch := range req.Topics {
		if c.s.wire.Private(ch) && (!req.Private || !c.loggedIn()) {
			continue
		}
		if !c.s.accepts(ch) {
			continue
		}
		if room >= 0 && c.s.limited(ch) && !c.s.subscribed(c, ch) {
			if room == 0 {
				continue
			}
			room--
		}
		accepted = append(accepted, ch)
	}
	for _, t := range accepted {
		c.after = append(c.after, func() []byte { return c.s.join(c, t, "") })
	}
	return json.RawMessage(c.s.wire.AppendSubscribed(nil, accepted)), nil
}

// unsubscribeChannels handles a channel unsubscribe request on c.s
// reader goroutine; the result lists the channels c was subscribed to.
func unsubscribeChannels(c *conn, req *protocol.Incoming) (any, *protocol.Error) {
	removed := make([]string, 0, len(req.Topics))
	for _, ch := range req.Topics {
		if c.s.removeSub(c, ch) {
			removed = append(removed, ch)
		}
	}
	return json.RawMessage(c.s.wire.AppendUnsubscribed(nil, removed)), nil
}

// subscribeIDs answers the subscribe and unsubscribe requests of a dialect
// whose server assigns an id to every subscription (Ethereum's
// eth_subscribe): one topic a request, a fresh id for it on this
// connection, refused with an error when the server does not know it.
func subscribeIDs(c *conn, req *protocol.Incoming) (any, *protocol.Error, bool) {
	wire := c.s.wire
	switch req.Op {
	case protocol.OpSubscribe:
		topic := req.Topics[0]
		if !c.s.accepts(topic) {
			return nil, &protocol.Error{Code: protocol.CodeInvalidParams, Message: "subscription " + topic + " refused"}, true
		}
		id := wire.SubscriptionID()
		c.after = append(c.after, func() []byte { return c.s.join(c, topic, id) })
		return json.RawMessage(wire.AppendSubscribed(nil, []string{id})), nil, true
	case protocol.OpUnsubscribe:
		if !c.s.removeEthSub(c, req.Topics[0]) {
			return nil, protocol.ErrSubscriptionNotFound, true
		}
		return json.RawMessage(wire.AppendUnsubscribed(nil, req.Topics)), nil, true
	}
	return nil, nil, false
}
