package sidecar

import (
	"slices"
	"time"

	"github.com/gorilla/websocket"

	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// A WebSocket client that asks for stamps (protocol.WantsStamps:
// notify=stamps) gets each forwarded notification with the member
// protocol.AppendStamps adds: the venue's stamp (read upstream under
// client.WithStamps), the sidecar's receive time (the upstream reader's
// Message.RecvTime) and its send time, taken by the goroutine writing to
// that client just before the write(2) or writev(2) that carries the
// frame begins: the pump's, for a direct write (session.offer), else the
// client's writer's, once a batch. Those clients are an encoding of their
// own, so a client that did not ask gets the venue's frame byte for byte
// and pays nothing for it.
//
// The topic still builds a message's frame once for all of them, up to
// send_ns's value (protocol.AppendStampsHead), and queues after it a send
// slot: one of the package's two templates of the frame's rest (the value
// padded to its fixed width and the member's end, protocol.StampsTailLen
// bytes, then the SSE event's end for sseSendSlot), known by its address.
// The frame's length is so known when it is built (the WebSocket header
// holds it). The writer, about to write, puts the send time in a copy of
// the template in its own scratch (fillSendSlots), a direct write in its
// own copy of the frame (offerFrame): no byte the frame's other clients
// read is written, and the frame, its slot after it, counts as one.

// An SSE stream asks with stamps=1 and gets the same member in each
// message event's data: appended to the {"topic":…,"data":…} object of a
// default event, to the payload of an event named after its topic
// (?event=topic), where the payload is an object. Those are two encodings
// more, resumable like the others; a replayed event carries no member.

// sseMessagesStamped and sseNamedStamped are the SSE encodings with
// stamps.
var (
	sseMessagesStamped = &encoding{id: 4, kind: kindSSE, resumable: true, stamped: true, newEncoder: func(t *topic) encoder { return newSSEEncoder(t.cfg.stream, t.upstream, false, true) }}
	sseNamedStamped    = &encoding{id: 5, kind: kindSSE, resumable: true, stamped: true, newEncoder: func(t *topic) encoder { return newSSEEncoder(t.cfg.stream, t.upstream, true, true) }}
)

// The send slots: the rest of a frame whose send stamp is written at the
// socket write, the value's place first (all spaces but a 0, filled by
// fillSendSlot). Only their addresses mark a queued frame's slot
// (isSendSlot); their bytes are never written or changed.
var (
	wsSendSlot  = protocol.AppendStampsTail(nil, 0)
	sseSendSlot = append(protocol.AppendStampsTail(nil, 0), '\n', '\n')
)

// isSendSlot reports whether f, a queued frame, is a send slot.
func isSendSlot(f []byte) bool {
	return len(f) >= protocol.StampsTailLen && (&f[0] == &wsSendSlot[0] || &f[0] == &sseSendSlot[0])
}

// fillSendSlot appends slot with send, Unix nanoseconds, in the value's
// place: the bytes to write for it.
func fillSendSlot(dst, slot []byte, send int64) []byte {
	return append(protocol.AppendStampsTail(dst, send), slot[protocol.StampsTailLen:]...)
}

// fillSendSlots replaces each send slot of vec, frames about to be
// written at once, by its bytes with the time now, appended to tails,
// and returns tails: the filled slots in order, which vec's entries point
// into. Called by a writer, which owns both.
func fillSendSlots(vec [][]byte, tails []byte) []byte {
	n := 0
	for _, f := range vec {
		if isSendSlot(f) {
			n += len(f)
		}
	}
	if n == 0 {
		return tails
	}
	// Room for every slot first: vec points into tails, which must not
	// move once filled.
	tails = slices.Grow(tails[:0], n)
	// One time for the batch, its digits written once and copied to
	// each slot.
	var stamp [protocol.StampsTailLen]byte
	protocol.AppendStampsTail(stamp[:0], time.Now().UnixNano())
	for i, f := range vec {
		if isSendSlot(f) {
			start := len(tails)
			tails = append(append(tails, stamp[:]...), f[protocol.StampsTailLen:]...)
			vec[i] = tails[start:len(tails):len(tails)]
		}
	}
	return tails
}

// appendStampedHead is f with the JSON object from f[start:] on, its last
// bytes, carrying st's member up to send_ns's value
// (protocol.AppendStampsHead); ok is false, and f returned as it is, when
// that is no object.
func appendStampedHead(f []byte, start int, st protocol.Stamps) (out []byte, ok bool) {
	out = make([]byte, start, len(f)+110)
	copy(out, f[:start])
	if out, ok = protocol.AppendStampsHead(out, f[start:], st); !ok {
		return f, false
	}
	return out, true
}

// wsStamped is the WebSocket encoding with stamps.
var wsStamped = &encoding{id: 3, kind: kindWS, stamped: true, newEncoder: func(t *topic) encoder {
	return wsStampedEncoder{newWSEncoder(t).(*wsEncoder)}
}}

// wsStampedEncoder is a topic's WebSocket frames with stamps.
type wsStampedEncoder struct{ *wsEncoder }

// live is the WebSocket frame with st's member, open for its send slot
// (its header counts the slot's bytes); a payload that is no object goes
// complete, without the member.
func (e wsStampedEncoder) live(seq uint64, data []byte, snapshot, resumed bool, st protocol.Stamps) (frame, slot []byte) {
	prefix, suffix := e.prefix, e.suffix
	if snapshot {
		prefix, suffix = e.snapPrefix, e.snapSuffix
	}
	body := make([]byte, 0, len(prefix)+len(data)+len(suffix))
	body = append(append(append(body, prefix...), data...), suffix...)
	head, ok := protocol.AppendStampsHead(make([]byte, 0, len(body)+110), body, st)
	if !ok {
		return textFrame(head), nil
	}
	frame = appendHeader(make([]byte, 0, maxHeader+len(head)), websocket.TextMessage, len(head)+len(wsSendSlot))
	return append(frame, head...), wsSendSlot
}

// stamps are m's times as the topic forwards it, its send time the time
// the topic builds its frames: the delivery histogram's (delays.go);
// each client's frame carries the time of its own write instead. Its
// receive time is the first wsfan process's that read it from the venue:
// a NATS group's leader's (natsbridge's Wsfan-Recv-Ns), or an upstream
// sidecar's, when m came through one (Message.UpstreamRecvTime).
func (t *topic) stamps(m client.Message) protocol.Stamps {
	st := protocol.Stamps{Recv: m.RecvTime.UnixNano(), Send: time.Now().UnixNano()}
	if !m.UpstreamRecvTime.IsZero() {
		st.Recv = m.UpstreamRecvTime.UnixNano()
	}
	if !m.ExchangeTime.IsZero() {
		st.Venue = m.ExchangeTime.UnixNano()
	}
	return st
}
