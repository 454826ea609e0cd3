package protocol

import (
	"math"
	"net/http"
	"strconv"

	"github.com/wsfan/wsfan/internal/jsonscan"
)

// A fan-out server (the sidecar) tells a WebSocket client that asked
// (the handshake header NotifyHeader or the notify query parameter
// naming NotifyStamps, beside or instead of NotifyGaps: "gaps,stamps")
// the times of each notification it forwards, in one member appended to
// the notification's top-level object, the venue's frame otherwise as it
// was:
//
//	{...the venue's notification...,"wsfan":{"venue_ns":1737043200123000000,"recv_ns":1737043200173000000,"send_ns":1737043200173021000}}
//
// Each is Unix nanoseconds by the wall clock of whoever took it; venue_ns
// is 0 when the venue stamps none. send_ns is taken by the fan-out
// server just before the write(2) that hands the frame to this client's
// socket (a frame that waited in the client's queue carries the time it
// left it; time in the kernel's buffers and on the wire is not in it),
// so a fan-out server builds the frame once, up to send_ns's value, for
// every client that asked (AppendStampsHead), and appends the rest at
// each client's write (AppendStampsTail): that value is then padded
// with spaces before it to 19 characters, valid JSON, though every time
// since 2001 has 19 digits. pkg/client asks for the member under
// client.WithStamps, cuts it off before classifying the frame, and fills
// Message.ExchangeTime and Message.UpstreamRecvTime from it.

// NotifyStamps is the NotifyHeader value (and notify query parameter)
// asking for each notification's stamps.
const NotifyStamps = "stamps"

// Stamps are a forwarded notification's times, in Unix nanoseconds.
type Stamps struct {
	Venue int64 // the venue's stamp of the message (Frame.Time); 0 for none
	Recv  int64 // when the fan-out server read it from its upstream
	Send  int64 // when the fan-out server began writing it to this client's socket
}

// WantsStamps reports whether a WebSocket handshake asked for stamps.
func WantsStamps(r *http.Request) bool { return wantsNotice(r, NotifyStamps) }

// stampsHead is how the member starts, comma included.
const stampsHead = `,"wsfan":{"venue_ns":`

// AppendStamps appends frame, a JSON object, with the member carrying s
// added last to its top level. A frame that does not end its object with
// '}' is appended as it is.
func AppendStamps(dst, frame []byte, s Stamps) []byte {
	out, ok := AppendStampsHead(dst, frame, s)
	if !ok {
		return out
	}
	return append(strconv.AppendInt(out, s.Send, 10), "}}"...)
}

// StampsTailLen is the length of what AppendStampsTail appends.
const StampsTailLen = maxStampDigits + len("}}")

// AppendStampsHead appends what AppendStamps does up to send_ns's value,
// which it leaves out with the member's end (s.Send is not read): a
// fan-out server builds it once for every client that asked, and
// AppendStampsTail completes it at each client's write. ok is false for
// a frame that does not end its object with '}': it is appended as it
// is, complete.
func AppendStampsHead(dst, frame []byte, s Stamps) (out []byte, ok bool) {
	end := lastNonSpace(frame)
	if end < 1 || frame[end] != '}' {
		return append(dst, frame...), false
	}
	head := stampsHead
	if i := lastNonSpace(frame[:end]); i >= 0 && frame[i] == '{' {
		head = head[1:] // an empty object: no comma
	}
	dst = append(append(dst, frame[:end]...), head...)
	dst = strconv.AppendInt(dst, s.Venue, 10)
	dst = strconv.AppendInt(append(dst, `,"recv_ns":`...), s.Recv, 10)
	return append(dst, `,"send_ns":`...), true
}

// AppendStampsTail appends send, right-aligned in 19 characters (spaces
// before the digits of a time before September 2001, or of 0 for a
// negative one), and the member's end, StampsTailLen bytes in all: the
// rest of a frame AppendStampsHead began. The length is fixed, so a
// frame's length is known before its send time.
func AppendStampsTail(dst []byte, send int64) []byte {
	send = max(send, 0)
	start := len(dst)
	dst = append(dst, "                   }}"...)
	for i := start + maxStampDigits - 1; i >= start; i-- {
		dst[i] = byte('0' + send%10)
		if send /= 10; send == 0 {
			break
		}
	}
	return dst
}

// lastNonSpace is the index of b's last byte that is not JSON
// whitespace, or -1.
func lastNonSpace(b []byte) int {
	i := len(b) - 1
	for i >= 0 && jsonscan.SkipSpace(b[i:i+1], 0) == 1 {
		i--
	}
	return i
}

// CutStamps finds the member AppendStamps added at the end of frame and
// reads it: cut is where the member starts, so frame[:cut] followed by
// '}' is the notification as the venue sent it. ok is false for a frame
// without one, spelled exactly as AppendStamps writes it.
//
// It reads the member backwards from the frame's end, so a frame without
// it (every frame of a direct connection under client.WithStamps) costs
// a look at its last few bytes.
func CutStamps(frame []byte) (cut int, s Stamps, ok bool) {
	i := len(frame) - 2
	if i < 0 || frame[i] != '}' || frame[i+1] != '}' {
		return 0, Stamps{}, false
	}
	if s.Send, i, ok = stampBefore(frame, i, `,"send_ns":`); !ok {
		return 0, Stamps{}, false
	}
	if s.Recv, i, ok = stampBefore(frame, i, `,"recv_ns":`); !ok {
		return 0, Stamps{}, false
	}
	if s.Venue, i, ok = stampBefore(frame, i, stampsHead[1:]); !ok || i < 1 {
		return 0, Stamps{}, false
	}
	if frame[i-1] == ',' {
		return i - 1, s, true
	}
	if j := lastNonSpace(frame[:i]); j >= 0 && frame[j] == '{' { // the member was the object's only one
		return i, s, true
	}
	return 0, Stamps{}, false
}

// maxStampDigits is the most digits an int64 takes.
const maxStampDigits = 19

// stampBefore reads the digits that end just before frame[end], preceded
// by head and by the spaces AppendStampsTail pads a value with, and
// returns their value and where head starts.
func stampBefore(frame []byte, end int, head string) (v int64, start int, ok bool) {
	i := end
	for i > 0 && end-i < maxStampDigits && frame[i-1] >= '0' && frame[i-1] <= '9' {
		i--
	}
	digits := i
	for i > 0 && end-i < maxStampDigits && frame[i-1] == ' ' {
		i--
	}
	start = i - len(head)
	if digits == end || start < 0 || string(frame[start:i]) != head {
		return 0, 0, false
	}
	u, ok := jsonscan.Uint(frame[digits:end])
	if !ok || u > math.MaxInt64 {
		return 0, 0, false
	}
	return int64(u), start, true
}
