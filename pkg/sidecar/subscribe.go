package sidecar

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// errTooManyTopics refuses a subscribe going over
// Config.MaxTopicsPerClient; the session is closing with the reason.
var errTooManyTopics = errors.New("too many topics")

// await is a subscribe's step after hub.reserve: it waits, within ctx and
// Config.RequestTimeout, for the upstream subscribes of reserved (what
// reserve returned for names, with invalid and refusal). It returns the
// names accepted, in request order (those s held already included), the
// topics to hand to attach, each failed topic's own failure (why: nil
// when none failed upstream) and the first, and records what was
// refused. Called by the session's subscription goroutine; both
// transports subscribe through reserve and await.
func (s *session) await(ctx context.Context, names []string, reserved []*topic, invalid, refusal error) (accepted []string, fresh []*topic, why map[string]error, err error) {
	if refusal != nil {
		return nil, nil, nil, refusal
	}
	err = invalid
	ctx, cancel := context.WithTimeout(ctx, s.cfg.RequestTimeout)
	defer cancel()
	fresh = reserved[:0] // the waited-for ones, in place: never ahead of the loop
	for _, t := range reserved {
		if werr := s.hub.wait(ctx, t); werr != nil { // wait released it
			delete(s.pending, t.name)
			if err == nil {
				err = werr
			}
			if why == nil {
				why = make(map[string]error)
			}
			why[t.name] = werr
			continue
		}
		fresh = append(fresh, t)
	}
	var refused []string
	seen := make(map[string]struct{}, len(names))
	for _, n := range names {
		if _, dup := seen[n]; dup {
			continue
		}
		seen[n] = struct{}{}
		if s.holds(n) {
			accepted = append(accepted, n)
		} else {
			refused = append(refused, n)
		}
	}
	if err != nil {
		s.hub.refused(s, refused, err)
	}
	return accepted, fresh, why, err
}

// subscribe answers a subscribe request with the routing keys of what it
// subscribed: the accepted channels (Thalex, Deribit), or the topic's
// local subscription id (Ethereum: the same for every local client,
// stable across upstream reconnects; a topic the connection holds already
// gets a twin with an id of its own, as geth gives a second subscription,
// twins.go). Ethereal's answer is a status frame. It returns the topics to
// attach with the answer.
func (c *wsConn) subscribe(req *protocol.Incoming) ([]byte, []*topic) {
	return c.finishSubscribe(c.startSubscribe(req))
}

// subscribing is a subscribe between its two steps: its topics reserved
// on the hub (startSubscribe), not yet waited for (finishSubscribe). A
// batch starts all its subscribes before it waits for any, so that they
// go upstream together.
type subscribing struct {
	req              *protocol.Incoming
	topics, notices  []string
	reserved         []*topic
	invalid, refusal error
}

// startSubscribe reserves the topics of a subscribe request (hub.reserve).
func (c *wsConn) startSubscribe(req *protocol.Incoming) *subscribing {
	sub := &subscribing{req: req}
	if len(req.Topics) == 0 {
		return sub
	}
	sub.topics, sub.notices = c.withoutNotices(req.Topics)
	if c.cfg.subIDs && len(sub.topics) == 1 {
		sub.topics = []string{c.s.twinKey(sub.topics[0])}
	}
	if len(sub.topics) > 0 {
		sub.reserved, sub.invalid, sub.refusal = c.cfg.hub.reserve(c.s, sub.topics)
	}
	return sub
}

// finishSubscribe waits for the upstream subscribes of sub's topics and
// answers the request.
func (c *wsConn) finishSubscribe(sub *subscribing) ([]byte, []*topic) {
	w, req, topics := c.cfg.wire, sub.req, sub.topics
	if len(req.Topics) == 0 {
		return w.AppendError(nil, req.ID, protocol.CodeInvalidParams, "invalid params: no topic to subscribe", nil), nil
	}
	var accepted []string
	var attach []*topic
	var err error
	var why map[string]error
	if len(topics) > 0 {
		accepted, attach, why, err = c.s.await(c.opsCtx, topics, sub.reserved, sub.invalid, sub.refusal)
	}
	accepted = append(accepted, sub.notices...)
	if ta, ok := w.(protocol.TopicAnswering); ok {
		return c.answerEach(ta, req, accepted, topics, err, why), attach
	}
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
		removed := append(c.s.unsubscribe(topics), notices...)
		if ta, ok := w.(protocol.TopicAnswering); ok {
			// Every topic is answered, held or not: the program waits
			// for an answer to each.
			return ta.AppendTopicAnswers(nil, req.ID, protocol.OpUnsubscribe, req.Topics)
		}
		return w.AppendResult(nil, req.ID, w.AppendUnsubscribed(nil, removed))
	}
	var removed []string
	for _, id := range req.Topics { // a look-up each, never a walk of the session's topics
		if t := c.cfg.hub.byLocalID(id); t != nil && c.s.holdsTopic(t) {
			c.s.unsubscribe([]string{t.name})
			removed = append(removed, id)
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

// answerEach answers a subscribe as a venue that answers each topic in
// a frame of its own does (protocol.TopicAnswering: OKX): an
// acknowledgement for each topic of done, then a refusal for each other
// topic of asked, with its own reason (why; err for a topic that has
// none of its own).
func (c *wsConn) answerEach(ta protocol.TopicAnswering, req *protocol.Incoming, done, asked []string, err error, why map[string]error) []byte {
	out := ta.AppendTopicAnswers(nil, req.ID, protocol.OpSubscribe, done)
	answered := make(map[string]struct{}, len(done))
	for _, t := range done {
		answered[t] = struct{}{}
	}
	for _, t := range asked {
		if _, ok := answered[t]; ok {
			continue
		}
		answered[t] = struct{}{}
		out = ta.AppendTopicRefusal(out, req.ID, t, refusalOf(cmp.Or(why[t], err, errors.New("subscription refused"))))
	}
	return out
}

// refusalOf is the error object refusing a topic for err: the
// upstream's own refusal, as it came (OKX's names its argument), or the
// sidecar's, naming the topic where the dialect writes it ({0}, see
// protocol.TopicAnswering).
func refusalOf(err error) *protocol.Error {
	var re *client.RPCError
	switch {
	case errors.As(err, &re):
		return re
	case errors.Is(err, errUnknownTopic):
		return &protocol.Error{Code: protocol.CodeInvalidParams, Message: err.Error() + ": {0}"}
	}
	return &protocol.Error{Code: codeUpstream, Message: err.Error() + ": {0}"}
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

// attach queues frame (an acknowledgement, or nil) and attaches topics,
// as subscribe returned them, as one step for the topics' pumps: their
// locks are held throughout, so no notification of them precedes the
// acknowledgement, and none published after the client read it is missed.
// A topic is attached only while it is pending on the session: one a
// batch unsubscribed after subscribing it was let go already.
// Called by the session's subscription goroutine (an SSE stream's handler).
func (s *session) attach(frame []byte, topics []*topic) {
	topics = slices.DeleteFunc(topics, func(t *topic) bool { return s.pending[t.name] != t })
	slices.SortFunc(topics, func(a, b *topic) int { return strings.Compare(a.name, b.name) })
	for _, t := range topics { // lock in name order: pumps hold one lock at a time
		t.mu.Lock()
	}
	if frame != nil {
		s.reply(frame)
	}
	for _, t := range topics {
		delete(s.pending, t.name)
		s.topics[t.name] = t
		t.attachLocked(s)
	}
	for _, t := range topics {
		t.mu.Unlock()
	}
	s.ntopics.Store(int32(len(s.topics)))
}

// letGo releases topics reserved for the session and not attached (a
// stream that could not start). Called by its subscription goroutine.
func (s *session) letGo(topics []*topic) {
	for _, t := range topics {
		if s.pending[t.name] == t {
			delete(s.pending, t.name)
			s.hub.release(t)
		}
	}
}

// unsubscribe leaves the named topics and returns those the session held
// (a topic a batch subscribed earlier and has not answered yet, pending,
// included). Called by the session's subscription goroutine (an SSE
// stream's handler).
func (s *session) unsubscribe(names []string) []string {
	removed := make([]string, 0, min(len(names), len(s.topics)+len(s.pending)))
	for _, n := range names {
		if t, ok := s.pending[n]; ok {
			delete(s.pending, n)
			s.hub.release(t)
			removed = append(removed, n)
			continue
		}
		t, ok := s.topics[n]
		if !ok {
			continue
		}
		delete(s.topics, n)
		t.detach(s)
		s.hub.release(t)
		removed = append(removed, n)
	}
	s.ntopics.Store(int32(len(s.topics)))
	return removed
}

// unsubscribeAll leaves every topic. Called by the session's subscription
// goroutine, and when the session ends.
func (s *session) unsubscribeAll() {
	for name, t := range s.pending {
		s.hub.release(t)
		delete(s.pending, name)
	}
	for name, t := range s.topics {
		t.detach(s)
		s.hub.release(t)
		delete(s.topics, name)
	}
	s.ntopics.Store(0)
}
