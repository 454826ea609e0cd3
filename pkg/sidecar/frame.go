package sidecar

import (
	"encoding/binary"

	"github.com/gorilla/websocket"

	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// WebSocket frames from a server are not masked, so one encoded frame,
// header included, is valid on every local connection: the pump builds it
// once and every writer hands the same bytes to writev(2).

// maxHeader is the longest frame header a server writes.
const maxHeader = 10

// appendHeader appends the header of a final, unmasked frame with opcode
// and a payload of n bytes.
func appendHeader(dst []byte, opcode int, n int) []byte {
	dst = append(dst, 0x80|byte(opcode))
	switch {
	case n <= 125:
		return append(dst, byte(n))
	case n <= 0xffff:
		return binary.BigEndian.AppendUint16(append(dst, 126), uint16(n))
	default:
		return binary.BigEndian.AppendUint64(append(dst, 127), uint64(n))
	}
}

// textFrame returns one text frame whose payload is the concatenation of
// parts, in a single allocation.
func textFrame(parts ...[]byte) []byte {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	f := appendHeader(make([]byte, 0, maxHeader+n), websocket.TextMessage, n)
	for _, p := range parts {
		f = append(f, p...)
	}
	return f
}

// textFrames returns answer as text frames: one, or one for each message
// of a JSON text sequence (a protocol.TopicAnswering dialect's answers
// to a subscribe, protocol.EachMessage), to be written at once.
func textFrames(answer []byte) []byte {
	if len(answer) == 0 || answer[0] != protocol.RecordSeparator {
		return textFrame(answer)
	}
	var out []byte
	protocol.EachMessage(answer, func(msg []byte) { out = append(out, textFrame(msg)...) })
	return out
}

// controlFrame returns a ping, pong or close frame; payload is cut to the
// 125 bytes a control frame may carry.
func controlFrame(opcode int, payload []byte) []byte {
	if len(payload) > 125 {
		payload = payload[:125]
	}
	return append(appendHeader(make([]byte, 0, 2+len(payload)), opcode, len(payload)), payload...)
}

// closeFrame returns a close frame with code and a reason, cut to fit.
func closeFrame(code int, reason string) []byte {
	if len(reason) > 123 {
		reason = reason[:120] + "..."
	}
	return controlFrame(websocket.CloseMessage, websocket.FormatCloseMessage(code, reason))
}

// wsFrames is the WebSocket encoding: each message one text frame in the
// dialect's notification envelope (its snapshot envelope for a message
// the exchange marks whole state), and, for a client that asked
// (protocol.WantsGapNotices), a gap notice before the message after a
// hole.
var wsFrames = &encoding{id: 0, kind: kindWS, newEncoder: newWSEncoder}

// wsEncoder is a topic's WebSocket frames.
type wsEncoder struct {
	prefix, suffix         []byte // the notification envelope around a payload
	snapPrefix, snapSuffix []byte // the envelope of a message marked whole state
	rpc                    bool   // the dialect speaks JSON-RPC (its notices too)
	upstream, localID      string // the topic as named upstream, and its local subscription id
}

func newWSEncoder(t *topic) encoder {
	e := &wsEncoder{rpc: t.cfg.wire.RPC(), upstream: t.upstream, localID: t.localID}
	e.prefix, e.suffix = t.cfg.wire.Envelope(t.upstream, t.localID)
	e.snapPrefix, e.snapSuffix = t.cfg.wire.SnapshotEnvelope(t.upstream, t.localID)
	return e
}

func (e *wsEncoder) message(_ uint64, data []byte, snapshot, _ bool) []byte {
	if snapshot {
		return textFrame(e.snapPrefix, data, e.snapSuffix)
	}
	return textFrame(e.prefix, data, e.suffix)
}

// live is message: the frames carry no times.
func (e *wsEncoder) live(seq uint64, data []byte, snapshot, resumed bool, _ protocol.Stamps) (frame, slot []byte) {
	return e.message(seq, data, snapshot, resumed), nil
}

// hole is the gap notice (protocol.AppendGapNotice) with the hole's cause.
func (e *wsEncoder) hole(m client.Message) []byte {
	cause := protocol.GapSequence
	switch {
	case m.Flags&client.FlagBackfilled != 0:
		cause = protocol.GapBackfilled
	case m.Flags&client.FlagStale != 0:
		cause = protocol.GapStale
	case m.Reconnected():
		cause = protocol.GapReconnected
	}
	n := protocol.GapNotice{Channel: e.upstream, Subscription: e.localID, Cause: cause}
	return textFrame(protocol.AppendGapNotice(nil, e.rpc, n))
}

// lost is nil: a WebSocket client does not resume.
func (e *wsEncoder) lost() []byte { return nil }

// dropped is the gap notice with cause "dropped": the sidecar dropped
// messages of the topic for this client.
func (e *wsEncoder) dropped() []byte {
	n := protocol.GapNotice{Channel: e.upstream, Subscription: e.localID, Cause: protocol.GapDropped}
	return textFrame(protocol.AppendGapNotice(nil, e.rpc, n))
}

// down is the gap notice with cause "down": the hole starts now.
func (e *wsEncoder) down() []byte {
	n := protocol.GapNotice{Channel: e.upstream, Subscription: e.localID, Cause: protocol.GapDown}
	return textFrame(protocol.AppendGapNotice(nil, e.rpc, n))
}
