package sidecar

import (
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// An encoding is how one transport frames a topic's messages for its
// clients: a WebSocket frame in the dialect's envelope (wsFrames, frame.go)
// or an SSE event in its message or named form (sseMessages, sseNamed,
// sseevent.go), each also with stamps (wsStamped, sseMessagesStamped,
// sseNamedStamped, stamps.go). Each session has one, set by its transport
// from what the client asked for. A topic builds the frame of each
// encoding in use once a message and offers the same bytes to every
// session of that encoding (topic.publish); it knows transports only
// through this type.
type encoding struct {
	// id indexes a topic's encoders: sessions of one id share frames.
	id int
	// kind is the transport whose sessions use it.
	kind sessionKind
	// resumable: the encoding's clients may resume a stream from a
	// position (SSE's Last-Event-ID), so a topic that has one keeps a
	// history of its last messages (ssehistory.go).
	resumable bool
	// stamped: the encoding's live messages carry their times
	// (protocol.AppendStamps), their send stamp appended at each
	// client's write (stamps.go).
	stamped bool
	// newEncoder makes the encoding's encoder for topic t.
	newEncoder func(t *topic) encoder
}

// numEncodings is how many encodings there are: ids 0 to numEncodings-1.
const numEncodings = 6

// encoder is an encoding's frames for one topic. Each method returns a
// frame of its own, which the caller may queue to any number of sessions.
type encoder interface {
	// message is the frame of a message replayed from what the topic
	// keeps (a cached last value, a book's snapshot, a resuming client's
	// history): seq is its place in the Server's count of messages (a
	// resume position), snapshot whether the exchange marked it whole
	// state, resumed whether it is the topic's first after an upstream
	// change. It carries no times.
	message(seq uint64, data []byte, snapshot, resumed bool) []byte
	// live is the frame of a message as the topic publishes it, st its
	// times. A stamped encoding's frame ends where the send stamp's
	// value goes, and slot is the rest (a send slot, stamps.go), which
	// the session writing it fills and appends at the socket write; slot
	// is nil for a complete frame.
	live(seq uint64, data []byte, snapshot, resumed bool, st protocol.Stamps) (frame, slot []byte)
	// hole is the mark that goes before m when messages were lost before
	// it (m.Gap or m.Reconnected), or nil when the encoding marks none
	// there. Sessions that did not ask for marks (session.marks) skip it.
	hole(m client.Message) []byte
	// lost is the mark a resuming client gets first when the topic's
	// history cannot give it every message it missed.
	lost() []byte
	// down is the mark sent, without a message, when the topic's source
	// stops (holestart.go), or nil when the encoding marks none then.
	down() []byte
	// dropped is the mark that goes before a session's next message of
	// the topic after the session dropped some for a full queue
	// (dropnotice.go).
	dropped() []byte
}

// resumePoint is where a client resumes a stream (SSE's Last-Event-ID):
// the topic replays, from its history, what came after.
type resumePoint struct {
	known bool   // the id names a position of this sidecar: from
	from  uint64 // the last message the client had
}
