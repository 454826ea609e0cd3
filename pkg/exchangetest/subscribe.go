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
	var refused []topicRefusal
	room := -1 // no cap
	if limit := c.s.cfg.topicCap; limit > 0 {
		room = limit - c.s.topicsOf(c)
	}
	for _, ch := range req.Topics {
		if c.s.wire.Private(ch) && (!req.Private || !c.loggedIn()) {
			refused = append(refused, topicRefusal{ch, c.s.ex.LoginRequired})
			continue
		}
		if !c.s.accepts(ch) || (c.s.ex.ServedOn != nil && !c.s.ex.ServedOn(c.path, ch)) {
			refused = append(refused, topicRefusal{ch, c.s.ex.UnknownTopic})
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
	if _, ok := c.s.wire.(protocol.TopicAnswering); ok {
		return topicAnswers{op: protocol.OpSubscribe, done: accepted, refused: refused}, nil
	}
	return json.RawMessage(c.s.wire.AppendSubscribed(nil, accepted)), nil
}

// topicAnswers is the answer to a subscribe or unsubscribe of a dialect
// that answers each topic in a frame of its own (protocol.TopicAnswering:
// OKX): the topics done, and those refused with the venue's reason.
type topicAnswers struct {
	op      protocol.Op
	done    []string
	refused []topicRefusal
}

// topicRefusal is one refused topic and the venue's reason; a nil reason
// leaves the topic out, unanswered.
type topicRefusal struct {
	topic string
	why   *protocol.Error
}

// append writes the answers as a JSON text sequence (protocol.EachMessage).
func (a topicAnswers) append(dst []byte, w protocol.TopicAnswering, id []byte) []byte {
	dst = w.AppendTopicAnswers(dst, id, a.op, a.done)
	for _, r := range a.refused {
		if r.why != nil {
			dst = w.AppendTopicRefusal(dst, id, r.topic, r.why)
		}
	}
	return dst
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
	if _, ok := c.s.wire.(protocol.TopicAnswering); ok {
		// Every argument is answered, subscribed or not.
		return topicAnswers{op: protocol.OpUnsubscribe, done: req.Topics}, nil
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
