package sidecar

import (
	"time"

	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// A WebSocket client that asks for stamps (protocol.WantsStamps:
// notify=stamps) gets each forwarded notification with the member
// protocol.AppendStamps adds: the venue's stamp (read upstream under
// client.WithStamps), the sidecar's receive time (the upstream reader's
// Message.RecvTime) and its send time, taken once a message when the
// topic builds its frames (publish), not at each client's socket write,
// so one frame still serves every such client. Those clients are an
// encoding of their own, so a client that did not ask gets the venue's
// frame byte for byte.

// An SSE stream asks with stamps=1 and gets the same member in each
// message event's data: appended to the {"topic":…,"data":…} object of a
// default event, to the payload of an event named after its topic
// (?event=topic), where the payload is an object. Those are two encodings
// more, resumable like the others; a replayed event carries no member.

// sseMessagesStamped and sseNamedStamped are the SSE encodings with
// stamps.
var (
	sseMessagesStamped = &encoding{id: 4, kind: kindSSE, resumable: true, newEncoder: func(t *topic) encoder { return newSSEEncoder(t.cfg.stream, t.upstream, false, true) }}
	sseNamedStamped    = &encoding{id: 5, kind: kindSSE, resumable: true, newEncoder: func(t *topic) encoder { return newSSEEncoder(t.cfg.stream, t.upstream, true, true) }}
)

// appendStamped is f with the JSON object from f[start:] on, its last
// bytes, carrying st's member (protocol.AppendStamps).
func appendStamped(f []byte, start int, st protocol.Stamps) []byte {
	out := make([]byte, start, len(f)+110)
	copy(out, f[:start])
	return protocol.AppendStamps(out, f[start:], st)
}

// wsStamped is the WebSocket encoding with stamps.
var wsStamped = &encoding{id: 3, kind: kindWS, newEncoder: func(t *topic) encoder {
	return wsStampedEncoder{newWSEncoder(t).(*wsEncoder)}
}}

// wsStampedEncoder is a topic's WebSocket frames with stamps.
type wsStampedEncoder struct{ *wsEncoder }

// message is the WebSocket frame with st appended; a message replayed
// from what the topic keeps (st zero) goes without.
func (e wsStampedEncoder) message(seq uint64, data []byte, snapshot, resumed bool, st protocol.Stamps) []byte {
	if st.Recv == 0 {
		return e.wsEncoder.message(seq, data, snapshot, resumed, st)
	}
	prefix, suffix := e.prefix, e.suffix
	if snapshot {
		prefix, suffix = e.snapPrefix, e.snapSuffix
	}
	body := make([]byte, 0, len(prefix)+len(data)+len(suffix))
	body = append(append(append(body, prefix...), data...), suffix...)
	return textFrame(protocol.AppendStamps(make([]byte, 0, len(body)+110), body, st))
}

// stamps are m's times as the topic forwards it, its send time now. Its
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
