package sidecar

import (
	"errors"
	"slices"

	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// The answers the sidecar makes itself to a WebSocket client's subscribe
// and unsubscribe requests, encoded by the dialect's server half, through
// the session's subscribe and unsubscribe.

// Error codes of answers the sidecar makes itself, beside the JSON-RPC
// codes of pkg/protocol.
const (
	codeUpstream = -32000 // the upstream failed the call: timeout, lost connection
	codeBlocked  = -32001 // the method is not forwarded
)

// subscribe answers a subscribe request with the routing keys of what it
// subscribed: the accepted channels (Thalex, Deribit), or the topic's
// local subscription id (Ethereum: the same for every local client,
// stable across upstream reconnects; a topic the connection holds already
// gets a twin with an id of its own, as geth gives a second subscription,
// twins.go). Ethereal's answer is a status frame.
func (c *wsConn) subscribe(req *protocol.Incoming) ([]byte, []*topic) {
	w := c.cfg.wire
	if len(req.Topics) == 0 {
		return w.AppendError(nil, req.ID, protocol.CodeInvalidParams, "invalid params: no topic to subscribe", nil), nil
	}
	topics, notices := c.withoutNotices(req.Topics)
	if c.cfg.subIDs && len(topics) == 1 {
		topics = []string{c.s.twinKey(topics[0])}
	}
	var accepted []string
	var attach []*topic
	var err error
	if len(topics) > 0 {
		accepted, attach, err = c.s.subscribe(c.opsCtx, topics)
	}
	accepted = append(accepted, notices...)
	if !c.cfg.subIDs {
		if len(accepted) == 0 && !w.RPC() {
			// An Ethereal event names one topic, and its answer is a
			// status: a refusal is an error with its reason.
			if err == nil {
				err = errors.New("subscription refused")
			}
			return errorResponse(w, req.ID, err), nil
		}
		if len(accepted) == 0 && err != nil && !errors.Is(err, errTooManyTopics) {
			// Nothing subscribed, and a reason: say it, in the dialect's
			// error shape, rather than an empty list.
			return errorResponse(w, req.ID, subscribeError(topics, err)), nil
		}
		// What was accepted, as the exchange answers: its list omits
		// the refused channels.
		return w.AppendResult(nil, req.ID, w.AppendSubscribed(nil, accepted)), attach
	}
	if len(accepted) == 0 { // one topic per request: refused
		if err == nil {
			err = errors.New("subscription refused")
		}
		return errorResponse(w, req.ID, err), nil
	}
	t := c.s.topics[accepted[0]]
	if len(attach) > 0 {
		t = attach[0]
	}
	return w.AppendResult(nil, req.ID, w.AppendSubscribed(nil, []string{t.localID})), attach
}

// unsubscribe answers an unsubscribe request with the routing keys it
// removed: channels (Thalex, Deribit), or whether the subscription id was
// subscribed (Ethereum).
func (c *wsConn) unsubscribe(req *protocol.Incoming) []byte {
	w := c.cfg.wire
	if !c.cfg.subIDs {
		topics, notices := c.withoutNotices(req.Topics)
		return w.AppendResult(nil, req.ID, w.AppendUnsubscribed(nil, append(c.s.unsubscribe(topics), notices...)))
	}
	var removed []string
	for _, id := range req.Topics {
		for name, t := range c.s.topics {
			if t.localID == id {
				c.s.unsubscribe([]string{name})
				removed = append(removed, id)
				break
			}
		}
	}
	if len(removed) == 0 { // as geth answers an id the connection does not hold
		e := protocol.ErrSubscriptionNotFound
		return w.AppendError(nil, req.ID, e.Code, e.Message, nil)
	}
	return w.AppendResult(nil, req.ID, w.AppendUnsubscribed(nil, removed))
}

// withoutNotices splits the exchange's notice channel (Thalex's system)
// off topics. The sidecar answers it itself and holds nothing upstream:
// its upstream client subscribes it and acts on the notices (it
// reconnects early, the local clients keep their connections), so a
// local client asking for it is acknowledged and never told to reconnect.
func (c *wsConn) withoutNotices(topics []string) (rest, notices []string) {
	nt := c.cfg.noticeTopic
	if nt == "" || !slices.Contains(topics, nt) {
		return topics, nil
	}
	return slices.DeleteFunc(slices.Clone(topics), func(t string) bool { return t == nt }), []string{nt}
}

// errorResponse turns an upstream failure into the dialect's error
// object, keeping the server's code, message and data when it sent one.
func errorResponse(w protocol.Server, id []byte, err error) []byte {
	var re *client.RPCError
	switch {
	case errors.As(err, &re):
		return w.AppendError(nil, id, re.Code, re.Message, re.Data)
	case errors.Is(err, errUnknownTopic): // the client's mistake, not the upstream's
		return w.AppendError(nil, id, protocol.CodeInvalidParams, err.Error(), nil)
	}
	return w.AppendError(nil, id, codeUpstream, err.Error(), nil)
}
