package client

import (
	"bytes"
	"net/http"

	"github.com/wsfan/wsfan/pkg/protocol"
)

// A wsfan sidecar sends a gap notice (protocol.GapNotice) before the
// message after a hole in a topic's stream, when asked: the client asks
// on every dial (protocol.NotifyHeader; a venue ignores the header) and
// turns each notice into the flag the hole would have raised on a direct
// connection, on the topic's next message, with a Gap event.

// askGapNotices adds the handshake header asking a sidecar for gap
// notices, unless the user's headers set it already.
func askGapNotices(h http.Header) http.Header {
	if _, set := h[protocol.NotifyHeader]; set {
		return h
	}
	out := make(http.Header, len(h)+1)
	for k, v := range h {
		out[k] = v
	}
	out[protocol.NotifyHeader] = []string{protocol.NotifyGaps}
	return out
}

// gapNoticeMark is the quoted method a frame must hold to be read as a
// gap notice.
var gapNoticeMark = []byte(`"` + protocol.GapNoticeMethod + `"`)

// takeGapNotice reads data as a gap notice and, when it is one for a
// subscribed topic, flags the topic's next message. Called on the
// reader goroutine for frames the dialect did not recognise only, so the
// hot path never pays for it.
func (cn *conn) takeGapNotice(data []byte) bool {
	if !bytes.Contains(data, gapNoticeMark) {
		return false
	}
	n, ok := protocol.ParseGapNotice(data)
	if !ok {
		return false
	}
	c := cn.c
	ts := c.noticedTopic(n)
	if ts == nil {
		return true // a notice for a topic no longer held: nothing to flag
	}
	switch n.Cause {
	case protocol.GapBackfilled:
		ts.backfilled.Store(true) // the sidecar filled the hole: nothing is lost
		return true
	case protocol.GapReconnected:
		ts.resumed.Store(true)
	case protocol.GapStale:
		ts.stale.Store(true)
	default:
		ts.lost.Store(true)
	}
	c.stats.gaps.Add(1)
	c.emit(Event{Kind: Gap, Topic: ts.name})
	return true
}

// noticedTopic finds the topic a notice names: by its subscription id,
// the routing key of a dialect that has them, else by name.
func (c *Client) noticedTopic(n protocol.GapNotice) *topicState {
	key := n.Subscription
	if key == "" {
		key = n.Channel
	}
	if ts, ok := c.topics.route(key); ok {
		return ts
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.topics.get(n.Channel)
}
