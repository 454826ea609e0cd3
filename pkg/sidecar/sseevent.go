package sidecar

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// An SSE stream carries each message as one event with an id,
//
//	id: <stream>-<seq>
//	data: {"topic":"ticker.BTC-PERPETUAL.raw","data":{...the payload...}}
//
// a default "message" event, so EventSource.onmessage sees it; with
// ?event=topic the event is named after its topic instead and its data is
// the payload alone. <seq> counts every message the sidecar published,
// across topics, so one id says where a stream of many topics stood;
// <stream> names the sidecar process, so an id from another one is never
// taken for a position in this one. After an upstream change the first
// message of a topic says "reconnected":true (named events: an event
// wsfan.reconnected goes first); a resumed stream that lost messages says
// so with {"topic":T,"gap":true} (named: an event wsfan.gap).

// sseMessages and sseNamed are the SSE encodings: default "message"
// events carrying the topic, or events named after it (?event=topic).
// Their clients resume with Last-Event-ID, and always get the gap mark.
var (
	sseMessages = &encoding{id: 1, kind: kindSSE, resumable: true, newEncoder: func(t *topic) encoder { return newSSEEncoder(t.cfg.stream, t.upstream, false, false) }}
	sseNamed    = &encoding{id: 2, kind: kindSSE, resumable: true, newEncoder: func(t *topic) encoder { return newSSEEncoder(t.cfg.stream, t.upstream, true, false) }}
)

// sseEncoder encodes a topic's SSE events, in one form.
type sseEncoder struct {
	stream    string // this sidecar's stream id, the ids' prefix
	topicJSON []byte // the topic as a JSON string
	eventName []byte // the topic as an event name: no line breaks
	named     bool   // events named after the topic, their data the payload alone
	stamped   bool   // each message's data carries its times (stamps.go)
}

func newSSEEncoder(stream, topic string, named, stamped bool) *sseEncoder {
	return &sseEncoder{
		stream:    stream,
		topicJSON: protocol.AppendJSONString(nil, topic),
		eventName: []byte(strings.NewReplacer("\n", " ", "\r", " ").Replace(topic)),
		named:     named,
		stamped:   stamped,
	}
}

// message encodes message seq of the topic, with the reconnected mark
// when resumed. SSE has no snapshot mark: a book's joiner gets the
// snapshot as its first event.
func (e *sseEncoder) message(seq uint64, data []byte, snapshot, resumed bool) []byte {
	f, _ := e.live(seq, data, snapshot, resumed, protocol.Stamps{})
	return f
}

// live is message, and for a stamped stream the event's data carries st
// (stamps.go): the event then ends where the send stamp's value goes,
// and slot is sseSendSlot.
func (e *sseEncoder) live(seq uint64, data []byte, _, resumed bool, st protocol.Stamps) (frame, slot []byte) {
	f := make([]byte, 0, len(data)+len(e.topicJSON)+len(e.stream)+64)
	if e.named && resumed {
		f = append(f, "event: wsfan.reconnected\ndata: {\"topic\":"...)
		f = append(f, e.topicJSON...)
		f = append(f, "}\n\n"...)
	}
	f = append(f, "id: "...)
	f = append(f, e.stream...)
	f = append(f, '-')
	f = strconv.AppendUint(f, seq, 10)
	if e.named {
		f = append(f, "\nevent: "...)
		f = append(f, e.eventName...)
		f = append(f, "\ndata: "...)
		start := len(f)
		f = appendOneLine(f, data)
		return e.end(f, start, st)
	}
	f = append(f, "\ndata: "...)
	start := len(f)
	f = append(f, "{\"topic\":"...)
	f = append(f, e.topicJSON...)
	if resumed {
		f = append(f, ",\"reconnected\":true"...)
	}
	f = append(f, ",\"data\":"...)
	f = appendOneLine(f, data)
	f = append(f, '}')
	return e.end(f, start, st)
}

// end ends event f, its data's JSON object from f[start:] on: with st's
// member when the stream is stamped and the object can carry it (then
// open, the send slot to follow), else complete.
func (e *sseEncoder) end(f []byte, start int, st protocol.Stamps) (frame, slot []byte) {
	if e.stamped && st.Recv != 0 {
		if f, ok := appendStampedHead(f, start, st); ok {
			return f, sseSendSlot
		}
	}
	return append(f, '\n', '\n'), nil
}

// hole is the gap mark when messages were lost upstream (FlagGap: a
// broken chain, a frame dropped for its size); a reconnect is marked in
// the message itself.
func (e *sseEncoder) hole(m client.Message) []byte {
	if !m.Gap() {
		return nil
	}
	return e.lost()
}

// down is the gap mark: from the source's stop on, messages of the topic
// are missing before the next event.
func (e *sseEncoder) down() []byte { return e.lost() }

// dropped is the gap mark: the sidecar dropped events of the topic for
// this stream.
func (e *sseEncoder) dropped() []byte { return e.lost() }

// lost encodes the gap mark: messages of the topic are missing before
// the next event.
func (e *sseEncoder) lost() []byte {
	var f []byte
	if e.named {
		f = append(f, "event: wsfan.gap\ndata: {\"topic\":"...)
	} else {
		f = append(f, "data: {\"topic\":"...)
	}
	f = append(f, e.topicJSON...)
	if !e.named {
		f = append(f, ",\"gap\":true"...)
	}
	return append(f, "}\n\n"...)
}

// appendOneLine appends JSON data with any line break (pretty-printing
// whitespace: JSON never needs a raw one) made a space, so the data stays
// one SSE line.
func appendOneLine(f, data []byte) []byte {
	start := len(f)
	f = append(f, data...)
	if bytes.ContainsAny(data, "\r\n") {
		for i := start; i < len(f); i++ {
			if f[i] == '\n' || f[i] == '\r' {
				f[i] = ' '
			}
		}
	}
	return f
}

// parseEventID reads a Last-Event-ID: the sequence it names, and whether
// it is this stream's (an id of another sidecar process, or garbage,
// names no position here).
func parseEventID(id, stream string) (seq uint64, ok bool) {
	s, found := strings.CutPrefix(id, stream+"-")
	if !found {
		return 0, false
	}
	seq, err := strconv.ParseUint(s, 10, 64)
	return seq, err == nil
}
