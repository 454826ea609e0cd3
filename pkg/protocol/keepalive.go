package protocol

import "time"

// Keepalive is a client half whose venue wants a keepalive of its own at
// the application level, beside or instead of WebSocket pings: a frame
// the client sends every KeepaliveInterval, which the server answers with
// a frame that is no message of the dialect (OKX's and Bybit's text
// "ping", answered "pong"). pkg/client's writer sends it; its reader
// takes the answer for what it is, before Classify, so a bare "pong" is
// not a malformed frame. Liveness is still the WebSocket ping's.
type Keepalive interface {
	// KeepaliveInterval is how often the frame goes out: under the
	// venue's idle limit, with room for a slow link.
	KeepaliveInterval() time.Duration
	// KeepaliveFrame is the frame the client sends.
	KeepaliveFrame() []byte
	// IsKeepaliveAnswer reports whether frame is the server's answer.
	// It runs on every frame the reader gets, before Classify: keep it
	// a length check and a comparison.
	IsKeepaliveAnswer(frame []byte) bool
}

// KeepaliveServer is the server half of a venue with such a keepalive:
// it answers the client's keepalive frame, which is no request of the
// dialect, and says how long a client may stay silent before the server
// closes its connection. pkg/exchangetest answers and enforces it; the
// sidecar answers its local clients' keepalives itself, as the venue
// would.
type KeepaliveServer interface {
	// AnswerKeepalive returns the answer to frame when frame is the
	// client's keepalive; ok is false for any other frame. It runs before
	// ParseFrame on every frame a client sends.
	AnswerKeepalive(frame []byte) (answer []byte, ok bool)
	// IdleLimit is how long a connection may go without a frame from
	// its client before the server closes it; 0: no limit.
	IdleLimit() time.Duration
}
