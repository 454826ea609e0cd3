package sidecar

import (
	"encoding/binary"

	"github.com/gorilla/websocket"
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
