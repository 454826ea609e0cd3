package exchangetest

import (
	"bytes"
	"context"
	"fmt"
	"sync"

	"github.com/gorilla/websocket"

	"github.com/wsfan/wsfan/pkg/protocol"
)

// What a replay server (cmd/replay) needs of the exchange: recorded
// frames sent verbatim to the connections subscribed to their topic,
// and a signal when the first program subscribes.

// routingKeys caches each subscribed topic's routing key, as the
// dialect's client half reads it (protocol.Topic.Key).
type routingKeys struct {
	once  sync.Once
	proto protocol.Protocol
	keys  sync.Map // topic → key
}

func (k *routingKeys) of(dialect Dialect, topic string) string {
	k.once.Do(func() { k.proto, _ = protocol.ByName(string(dialect)) })
	if key, ok := k.keys.Load(topic); ok {
		return key.(string)
	}
	key := topic
	if k.proto != nil {
		if t, err := k.proto.NewTopic(topic); err == nil {
			key = t.Key
		}
	}
	k.keys.Store(topic, key)
	return key
}

// PublishFrame sends frame, verbatim, to every connection subscribed to
// a topic whose routing key is key (as the dialect's protocol reads a
// notification's), and returns how many connections it was queued to. A
// connection that subscribed under an id of its own (Ethereum) is left
// out: the id in a recorded frame is not its. It waits while a
// subscriber's outgoing queue is full.
func (s *Server) PublishFrame(key string, frame []byte) int {
	s.subMu.RLock()
	var few [16]*conn // a replay's frame goes to few connections: no allocation a frame
	targets := few[:0]
	for topic, conns := range s.subs {
		if s.keys.of(s.dialect, topic) != key {
			continue
		}
		for c, ids := range conns {
			if len(ids) == 0 {
				targets = append(targets, c)
			}
		}
	}
	s.subMu.RUnlock()
	n := 0
	for _, c := range targets {
		if c.send(outMsg{typ: websocket.TextMessage, data: frame}, nil) {
			n++
		}
	}
	return n
}

// PublishTopicFrame sends frame, recorded on a connection whose
// subscription to topic had the id key (Ethereum), to every connection
// subscribed to topic, each with its own id in place of key: a recorded
// notification replayed to programs that subscribed anew. A connection
// subscribed without an id gets frame verbatim. It returns how many
// connections it was queued to.
func (s *Server) PublishTopicFrame(topic, key string, frame []byte) int {
	s.subMu.RLock()
	var targets []target
	for c, ids := range s.subs[topic] {
		if len(ids) == 0 {
			targets = append(targets, target{c: c})
		}
		for _, id := range ids {
			targets = append(targets, target{c: c, id: id})
		}
	}
	s.subMu.RUnlock()
	old := protocol.AppendJSONString(nil, key)
	n := 0
	for _, t := range targets {
		out := frame
		if t.id != "" {
			out = bytes.Replace(frame, old, protocol.AppendJSONString(nil, t.id), 1)
		}
		if t.c.send(outMsg{typ: websocket.TextMessage, data: out}, nil) {
			n++
		}
	}
	return n
}

// PublishGap sends a gap notice (protocol.GapNotice) with cause to every
// connection that asked for them and is subscribed to topic, or, when
// topic is "", to a topic whose routing key is key; each notice names
// the topic as the connection subscribed it, and its own subscription id
// where it has one. A replay sends it just before a recorded
// notification that came with flags, so a program is told of the hole
// the recorded program was told of. It returns how many connections it
// was queued to.
func (s *Server) PublishGap(topic, key, cause string) int {
	type noticed struct {
		c *conn
		n protocol.GapNotice
	}
	var targets []noticed
	s.subMu.RLock()
	for name, conns := range s.subs {
		if topic != "" && name != topic || topic == "" && s.keys.of(s.dialect, name) != key {
			continue
		}
		for c, ids := range conns {
			if !c.notices {
				continue
			}
			if len(ids) == 0 {
				targets = append(targets, noticed{c, protocol.GapNotice{Channel: name, Cause: cause}})
			}
			if topic == "" {
				continue // as PublishFrame: a recorded id is not the connection's
			}
			for _, id := range ids {
				targets = append(targets, noticed{c, protocol.GapNotice{Channel: name, Subscription: id, Cause: cause}})
			}
		}
	}
	s.subMu.RUnlock()
	n := 0
	for _, t := range targets {
		if t.c.send(outMsg{typ: websocket.TextMessage, data: protocol.AppendGapNotice(nil, s.wire.RPC(), t.n)}, nil) {
			n++
		}
	}
	return n
}

// WaitSubscribed waits until some connection is subscribed to a topic
// that match accepts.
func (s *Server) WaitSubscribed(ctx context.Context, match func(topic string) bool) error {
	return s.chg.wait(ctx, func() (bool, string) {
		s.subMu.RLock()
		defer s.subMu.RUnlock()
		for topic := range s.subs {
			if match(topic) {
				return true, ""
			}
		}
		return false, fmt.Sprintf("a subscriber of a matching topic, have %d topics", len(s.subs))
	})
}
