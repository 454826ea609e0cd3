package exchangetest

import (
	"context"
	"fmt"
	"sync"

	"github.com/gorilla/websocket"
)

// ethSub locates an Ethereum subscription id.
type ethSub struct {
	c     *conn
	topic string
}

// target is one delivery of a notification: a connection and, for
// Ethereum, its subscription id.
type target struct {
	c  *conn
	id string
}

var targetPool = sync.Pool{New: func() any { return new([]target) }}

// envelopeRoom is what a notification adds to its topic and payload, with
// room to spare: its frame is allocated once.
const envelopeRoom = 96

// accepts reports whether a subscription to topic is allowed: it is among
// WithTopics (if given) and not refused.
func (s *Server) accepts(topic string) bool {
	if s.cfg.topics != nil {
		if _, ok := s.cfg.topics[topic]; !ok {
			return false
		}
	}
	s.mu.Lock()
	_, refused := s.refused[topic]
	s.mu.Unlock()
	return !refused
}

// addSub subscribes c to topic; id is the Ethereum subscription id ("" for
// other dialects, where a second subscription to the same topic is a no-op).
func (s *Server) addSub(c *conn, topic, id string) {
	s.subMu.Lock()
	conns := s.subs[topic]
	if conns == nil {
		conns = make(map[*conn][]string)
		s.subs[topic] = conns
	}
	ids, ok := conns[c]
	if id != "" {
		conns[c] = append(ids, id)
		s.ethID[id] = ethSub{c: c, topic: topic}
	} else if !ok {
		conns[c] = nil
	}
	s.subMu.Unlock()
	s.chg.notify()
}

// removeSub unsubscribes c from topic and reports whether it was subscribed.
func (s *Server) removeSub(c *conn, topic string) bool {
	s.subMu.Lock()
	conns := s.subs[topic]
	_, ok := conns[c]
	if ok {
		for _, id := range conns[c] {
			delete(s.ethID, id)
		}
		delete(conns, c)
		if len(conns) == 0 {
			delete(s.subs, topic)
		}
	}
	s.subMu.Unlock()
	if ok {
		s.chg.notify()
	}
	return ok
}

// removeEthSub removes c's Ethereum subscription id and reports whether it
// existed.
func (s *Server) removeEthSub(c *conn, id string) bool {
	s.subMu.Lock()
	sub, ok := s.ethID[id]
	ok = ok && sub.c == c
	if ok {
		delete(s.ethID, id)
		conns := s.subs[sub.topic]
		ids := conns[c]
		for i, x := range ids {
			if x == id {
				ids = append(ids[:i:i], ids[i+1:]...)
				break
			}
		}
		if len(ids) == 0 {
			delete(conns, c)
			if len(conns) == 0 {
				delete(s.subs, sub.topic)
			}
		} else {
			conns[c] = ids
		}
	}
	s.subMu.Unlock()
	if ok {
		s.chg.notify()
	}
	return ok
}

// dropSubs removes every subscription of a closed connection.
func (s *Server) dropSubs(c *conn) {
	s.subMu.Lock()
	for topic, conns := range s.subs {
		if ids, ok := conns[c]; ok {
			for _, id := range ids {
				delete(s.ethID, id)
			}
			delete(conns, c)
			if len(conns) == 0 {
				delete(s.subs, topic)
			}
		}
	}
	s.subMu.Unlock()
	s.chg.notify()
}

// Subscribers returns the number of connections subscribed to topic.
func (s *Server) Subscribers(topic string) int {
	s.subMu.RLock()
	defer s.subMu.RUnlock()
	return len(s.subs[topic])
}

// topicsOf counts the topics c is subscribed to.
func (s *Server) topicsOf(c *conn) int {
	s.subMu.RLock()
	defer s.subMu.RUnlock()
	n := 0
	for topic, conns := range s.subs {
		if _, ok := conns[c]; ok && s.limited(topic) {
			n++
		}
	}
	return n
}

// limited reports whether topic counts toward a connection's topic cap
// (venue.Exchange.LimitedTopic).
func (s *Server) limited(topic string) bool {
	return s.ex.LimitedTopic == nil || s.ex.LimitedTopic(topic)
}

// subscribed reports whether c is subscribed to topic.
func (s *Server) subscribed(c *conn, topic string) bool {
	s.subMu.RLock()
	defer s.subMu.RUnlock()
	_, ok := s.subs[topic][c]
	return ok
}

// DropConnectionOf abruptly closes, at the TCP level, the connection
// subscribed to topic (the first one found), and reports whether there
// was one. The server keeps listening.
func (s *Server) DropConnectionOf(topic string) bool {
	s.subMu.RLock()
	var victim *conn
	for c := range s.subs[topic] {
		victim = c
		break
	}
	s.subMu.RUnlock()
	if victim == nil {
		return false
	}
	victim.close()
	return true
}

// WaitSubscribers waits until exactly n connections are subscribed to topic.
func (s *Server) WaitSubscribers(ctx context.Context, topic string, n int) error {
	return s.chg.wait(ctx, func() (bool, string) {
		have := s.Subscribers(topic)
		return have == n, fmt.Sprintf("%d subscribers of %q, have %d", n, topic, have)
	})
}

// Publish sends data, the raw JSON payload, on topic to every subscribed
// connection and returns how many connections it was queued to. topic is
// the client-side topic string of the dialect ("ticker.BTC-PERPETUAL.raw",
// "book.BTC-PERPETUAL.100ms", "newHeads" or a compact Ethereum params array,
// "L2Book:BTCUSD"); data becomes the Thalex "notification", the Deribit
// "params.data", the Ethereum "params.result" or the Ethereal "data".
//
// The frame is encoded once and shared (per connection for Ethereum).
// Publish waits while a subscriber's outgoing queue is full.
func (s *Server) Publish(topic string, data []byte) int {
	return s.publish(topic, data, nil)
}

// publish is Publish that gives up waiting for full queues when abort is
// closed.
func (s *Server) publish(topic string, data []byte, abort <-chan struct{}) int {
	tp := targetPool.Get().(*[]target)
	targets := s.targets(topic, (*tp)[:0])
	n := s.deliver(topic, data, targets, abort)
	clear(targets)
	*tp = targets[:0]
	targetPool.Put(tp)
	return n
}

// targets appends to dst the deliveries of a notification on topic.
func (s *Server) targets(topic string, dst []target) []target {
	s.subMu.RLock()
	defer s.subMu.RUnlock()
	for c, ids := range s.subs[topic] {
		if len(ids) == 0 {
			dst = append(dst, target{c: c})
		}
		for _, id := range ids {
			dst = append(dst, target{c: c, id: id})
		}
	}
	return dst
}

// deliver queues data on topic to targets and returns how many
// connections it was queued to.
func (s *Server) deliver(topic string, data []byte, targets []target, abort <-chan struct{}) int {
	n := 0
	var shared []byte // the frame of every target without a subscription id
	var last *conn
	for _, t := range targets {
		frame := shared
		switch {
		case t.id != "":
			frame = s.wire.AppendNotification(make([]byte, 0, len(topic)+len(t.id)+len(data)+envelopeRoom), topic, t.id, data)
		case shared == nil:
			shared = s.wire.AppendNotification(make([]byte, 0, len(topic)+len(data)+envelopeRoom), topic, "", data)
			frame = shared
		}
		if t.c.send(outMsg{typ: websocket.TextMessage, data: frame}, abort) && t.c != last {
			n++
			last = t.c
		}
	}
	return n
}

// PublishRaw sends frame as one text message to every connection, whatever
// it subscribed, and returns how many connections it was queued to.
func (s *Server) PublishRaw(frame []byte) int {
	return s.broadcast(websocket.TextMessage, frame)
}

// broadcast queues one message to every open connection.
func (s *Server) broadcast(typ int, data []byte) int {
	s.mu.Lock()
	conns := s.connList()
	s.mu.Unlock()
	n := 0
	for _, c := range conns {
		if c.send(outMsg{typ: typ, data: data}, nil) {
			n++
		}
	}
	return n
}
