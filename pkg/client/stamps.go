package client

import (
	"net/http"
	"strings"
	"time"

	"github.com/wsfan/wsfan/pkg/protocol"
)

// Under WithStamps the reader gives every message the venue's stamp
// (Message.ExchangeTime): the dialect reads it in Classify
// (protocol.Frame.WantTime), or, behind a wsfan sidecar, which is asked
// for its stamps on every dial (protocol.NotifyStamps), it comes in the
// member the sidecar appended, which the reader cuts off before the frame
// is classified, with the sidecar's receive time (Message.UpstreamRecvTime).

// WithStamps gives every message the venue's stamp of it
// (Message.ExchangeTime) and, behind a wsfan sidecar, the sidecar's
// receive time (Message.UpstreamRecvTime), asking the sidecar for them
// on every dial. It costs a walk of each notification's payload on a
// direct connection, which the routing alone does not read. Default:
// off, and both times are zero.
func WithStamps() Option { return clientOption(func(c *config) { c.stamps = true }) }

// WithReadClock sets the clock the reader stamps each frame with when it
// reads it (Message.RecvTime, and the delays measured from it), for
// tests and simulations on a clock of their own. Default: time.Now.
func WithReadClock(now func() time.Time) Option {
	return clientOption(func(c *config) { c.now = now })
}

// stamps are the times the reader carries with a notification to its
// Message, in Unix nanoseconds; 0 for none.
type stamps struct {
	venue    int64 // the venue's stamp
	upstream int64 // a sidecar's receive time
}

// fill sets m's times from s.
func (s stamps) fill(m *Message) {
	if s.venue != 0 {
		m.ExchangeTime = time.Unix(0, s.venue)
	}
	if s.upstream != 0 {
		m.UpstreamRecvTime = time.Unix(0, s.upstream)
	}
}

// askStamps adds NotifyStamps to the handshake header asking a sidecar
// for notices, with gap notices (askGapNotices), when on; a header the
// user set is left as it is.
func askStamps(h http.Header, on bool) http.Header {
	if _, set := h[protocol.NotifyHeader]; set || !on {
		return h
	}
	out := h.Clone()
	if out == nil {
		out = make(http.Header, 1)
	}
	out[protocol.NotifyHeader] = []string{strings.Join([]string{protocol.NotifyGaps, protocol.NotifyStamps}, ",")}
	return out
}

// cutStamps takes the member a sidecar appended to a frame off it, in
// place: the frame's bytes are the reader's until it hands them on. It
// returns the frame as the venue sent it and the sidecar's stamps; a
// frame without the member comes back as it is.
func cutStamps(frame []byte) ([]byte, stamps) {
	cut, s, ok := protocol.CutStamps(frame)
	if !ok {
		return frame, stamps{}
	}
	frame[cut] = '}'
	return frame[: cut+1 : cut+1], stamps{venue: s.Venue, upstream: s.Recv}
}
