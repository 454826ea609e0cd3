// Package protocol holds what the wire dialects wsfan speaks share (Thalex,
// Deribit, Ethereum's eth_subscribe, Ethereal, OKX: each in a package of
// its own that registers it here).
//
// A Protocol encodes requests and subscribe frames into caller-owned
// buffers and classifies incoming frames by scanning for their keys, never
// by decoding them. Implementations are stateless and safe for concurrent
// use; per-connection state (pending ids, server-assigned subscription ids)
// belongs to the client.
//
// A Server is a dialect's other half, for whoever serves clients (the
// sidecar, the test exchange): it parses their requests and encodes the
// responses and notifications a Protocol classifies. ByName and
// ServerByName choose either half by the dialect's name.
package protocol

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/wsfan/wsfan/internal/jsonscan"
)

// Kind says what an incoming frame is.
type Kind uint8

const (
	// KindUnknown is a well-formed frame the dialect does not route.
	KindUnknown Kind = iota
	// KindResponse answers a request: Frame.ID with Frame.Result or Frame.Error.
	KindResponse
	// KindNotification carries subscription data: Frame.Key routes it and
	// Frame.Data is the payload.
	KindNotification
	// KindBatch is a JSON array of responses (Ethereum); iterate it with
	// EachElement and classify every element.
	KindBatch
	// KindHeartbeat is the server asking for a liveness answer now
	// (Deribit's test_request); reply with Protocol.HeartbeatReply.
	KindHeartbeat
	// KindEvent is a system event; Frame.Event says which.
	KindEvent
	// KindKeepalive is the answer to the client's keepalive
	// (Venue.Keepalive: OKX's bare "pong"): the venue is there.
	KindKeepalive
	// KindEnded is the server ending subscriptions of this connection on
	// its own (OKX's channel-conn-count-error): Frame.Key is the group it
	// ended (Topic.Group), Frame.Data the frame. The client ends the
	// subscriptions holding a topic of that group, with an error naming
	// it, rather than wait for messages that will not come.
	KindEnded
)

var kindNames = [...]string{"unknown", "response", "notification", "batch", "heartbeat", "event", "keepalive", "ended"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", k)
}

// Event is a system event announced by the server.
type Event uint8

const (
	// EventNone is no event.
	EventNone Event = iota
	// EventReconnect: the server will close this connection soon and the
	// client should reconnect now (Thalex's system channel).
	EventReconnect
)

// Frame is the classification of one incoming frame. Its byte slices point
// into the frame (or, for a composed Key, into the Frame itself); nothing is
// copied. Reuse one Frame per reader: Classify resets it.
type Frame struct {
	Kind   Kind   // what the frame is
	ID     uint64 // request id of a response; valid when HasID
	HasID  bool
	Result []byte // a response's "result" value
	Error  []byte // a response's "error" object
	Key    []byte // routing key of a notification
	Data   []byte // payload of a notification (or event)
	Event  Event
	// Snapshot is set when the exchange marks the notification as a whole
	// state (Thalex's top-level "snapshot":true).
	Snapshot bool
	// Time is the venue's stamp of a notification, in Unix nanoseconds,
	// read by the dialect from the member its venue documents (stamp.go);
	// 0 when the frame carries none, or when WantTime is false.
	Time int64
	// WantTime is set by the caller, once: Classify reads a
	// notification's Time, which walks the payload's members (the cost of
	// a payload scan, where the routing alone reads none of it). Reset
	// keeps it.
	WantTime bool

	// Storage for keys that are not a slice of the frame: composed from
	// two fields (Ethereal) or decoded from escapes. keyBig is a longer
	// key's storage, kept for the next one.
	keyBuf [96]byte
	keyBig []byte
}

// Reset clears f for the next frame, keeping nothing of the last.
func (f *Frame) Reset() {
	f.Kind, f.ID, f.HasID, f.Event, f.Snapshot, f.Time = KindUnknown, 0, false, EventNone, false, 0
	f.Result, f.Error, f.Key, f.Data = nil, nil, nil, nil
}

// KeyScratch returns empty storage for a key that is not a slice of the
// frame; pass what was built in it to keepKey.
func (f *Frame) KeyScratch() []byte {
	if f.keyBig != nil {
		return f.keyBig[:0]
	}
	return f.keyBuf[:0]
}

// KeepKey sets the routing key to one built in keyScratch, keeping its
// storage for the next key when it outgrew the Frame's own.
func (f *Frame) KeepKey(key []byte) {
	if cap(key) > len(f.keyBuf) && cap(key) > cap(f.keyBig) {
		f.keyBig = key[:0]
	}
	f.Key = key
}

// DecodeKey sets the routing key to the JSON string v, decoded: a slice
// of the frame when it has no escapes, else built in keyScratch. It
// reports whether v is a string.
func (f *Frame) DecodeKey(v []byte) bool {
	if bytes.IndexByte(v, '\\') < 0 {
		s, ok := jsonscan.String(v, nil)
		f.Key = s
		return ok
	}
	s, ok := jsonscan.AppendString(f.KeyScratch(), v)
	if ok {
		f.KeepKey(s)
	}
	return ok
}

// Topic is a topic as a dialect sends it, validated and encoded once when
// the topic is first subscribed and reused on every reconnect.
type Topic struct {
	// Name is the topic as the user wrote it.
	Name string
	// Key is the routing key of its notifications, or "" when the server
	// assigns one on every connection (Ethereum subscription ids).
	Key string
	// Private topics need an authenticated connection (Thalex account.*,
	// session.*; Deribit user.*).
	Private bool
	// Login, on a Private topic, names the on-connect hook that logs a
	// connection of the venue in, where only such a hook can ("okx.Login"):
	// the client refuses the topic before sending it when it has no
	// on-connect hook (client.WithOnConnect), naming Login.
	Login string
	// Path is the URL path of the venue's service that serves the topic,
	// where one host serves its topics on several (OKX's /ws/v5/public,
	// /ws/v5/private and /ws/v5/business); "" for any. The client refuses
	// the topic before sending it on a connection to another path of the
	// same directory (another of the venue's services), naming the URL to
	// use; a path elsewhere (a test server's, a proxy's) takes it.
	Path string
	// Sequenced topics carry a change id the client checks for gaps.
	Sequenced bool
	// SnapshotFirst says the exchange marks a Sequenced topic's snapshot
	// by position only: the first message after each subscribe is the
	// whole state (Ethereal's L2Book), whatever change it names.
	SnapshotFirst bool
	// Backfill says the topic's missed messages can be fetched after a
	// reconnect (Venue.Recoverer: an Ethereum node's newHeads).
	Backfill bool
	// Retracts says the topic's messages may take back an earlier one
	// (MessageReader.Retracted: an Ethereum node's logs, "removed": true
	// after a reorg).
	Retracts bool
	// Group is the name a frame of the server ending subscriptions on
	// its own (KindEnded) names the topic by: OKX's channel. "" for a
	// topic no server ends so.
	Group string

	Sub   []byte // the topic's piece of a subscribe frame
	Unsub []byte // the topic's piece of an unsubscribe frame, when it differs
}

// Request is one acknowledged request inside a Batch.
type Request struct {
	// ID is the request id the response will carry (for Ethereal, whose
	// answers carry none, the id orders the requests: see the client's
	// rule for answers without an id).
	ID uint64
	// Topics are the topics this request covers.
	Topics []*Topic
	// Message is the index in Batch.Messages of the message carrying
	// the request: requests of one batch array share it.
	Message int
}

// TopicIndex returns the index in r.Topics of the topic whose routing
// key is key, or -1: the topic an acknowledgement that names one key
// answers (TopicAcking).
func (r *Request) TopicIndex(key []byte) int {
	for i, t := range r.Topics {
		if t.Key == string(key) {
			return i
		}
	}
	return -1
}

// AckOne fills keys (one a topic of r) for an acknowledgement that
// accepts topic i of r alone (-1: none), as a dialect whose venue
// acknowledges each topic in a frame of its own answers Ack.
func (r *Request) AckOne(i int, keys []string) {
	for j, t := range r.Topics {
		keys[j] = ""
		if j == i {
			keys[j] = t.Key
		}
	}
}

// Batch is what a Subscribe or Unsubscribe encodes: WebSocket messages to
// write in one flush, and the requests whose responses acknowledge them.
type Batch struct {
	Messages [][]byte  // the frames to write, in order, in one flush
	Requests []Request // the requests among them that expect an answer

	arena []byte // storage the encoded messages are carved from
}

// Reset empties b, keeping its storage for the next encoding: the
// messages of the last one are overwritten, so reset a Batch only once
// they have been written (or will never be).
func (b *Batch) Reset() {
	clear(b.Requests) // drop the topic references
	b.Messages = b.Messages[:0]
	b.Requests = b.Requests[:0]
	b.arena = b.arena[:0]
}

// NewMessage returns an empty buffer of capacity size carved from the
// arena, and reserves that room. Appending past size moves the NewMessage
// to its own storage outside the arena; it stays correct.
func (b *Batch) NewMessage(size int) []byte {
	n := len(b.arena)
	if cap(b.arena)-n < size {
		// The old arena stays alive through the messages already carved.
		b.arena = make([]byte, 0, max(size, 2*cap(b.arena)))
		n = 0
	}
	b.arena = b.arena[:n+size]
	return b.arena[n : n : n+size]
}

// Protocol is a wire dialect.
type Protocol interface {
	// Name is the dialect's name: "thalex", "deribit", "ethereum", "ethereal".
	Name() string

	// NewTopic validates a topic and encodes its subscribe pieces once.
	NewTopic(name string) (*Topic, error)

	// AppendRequest appends one request frame to dst. params is JSON
	// (object or array) or nil for none. Dialects without RPC return
	// ErrUnsupported.
	AppendRequest(dst []byte, id uint64, method string, params []byte) ([]byte, error)

	// Subscribe encodes the topics into as few messages as the dialect
	// allows, at most chunk topics per request when chunk > 0. nextID
	// hands out request ids. Every topic is in exactly one Request.
	Subscribe(b *Batch, topics []*Topic, nextID func() uint64, chunk int)

	// Unsubscribe encodes the removal of topics; keys[i] is topics[i]'s
	// routing key on the current connection.
	Unsubscribe(b *Batch, topics []*Topic, keys []string, nextID func() uint64, chunk int)

	// Ack reads a subscribe response's result for req and stores in
	// keys[i] the routing key of req.Topics[i], or "" if it was refused.
	Ack(req *Request, result []byte, keys []string) error

	// Classify fills f from frame by scanning it. Every spelling JSON
	// allows answers the same as encoding/json would decode the frame:
	// key order, whitespace, escapes in names and values (keys come
	// decoded), text inside strings that looks like members; a repeated
	// member counts as its last occurrence. A valid frame of no known shape
	// is ErrUnrecognized. A payload or result that closes the frame is
	// sliced from its tail without being parsed, so a fault inside it
	// reaches whoever decodes it; any other fault is ErrMalformed, and an
	// Ethereal frame, whose payload is the whole frame, is checked whole.
	// UTF-8 is not checked. The differential fuzz targets (FuzzRoute*)
	// hold every dialect to this.
	Classify(frame []byte, f *Frame) error

	// HeartbeatReply appends the answer to a KindHeartbeat frame.
	HeartbeatReply(dst []byte, id uint64) []byte

	// Handshake lists the calls to make on every new connection before
	// anything else (Deribit's public/set_heartbeat).
	Handshake() []Call

	// Venue is what the venue is: its numbers, shapes and behaviour
	// families, read once by the client at Dial.
	Venue() Venue

	// Sequence extracts the change id of a Sequenced topic's notification
	// and the id it follows (0 when the frame names none, as a snapshot
	// does; Unchained for a change that names none, where the venue's
	// previous id is optional); ok is false when the frame carries no
	// change id.
	Sequence(data []byte) (id, prev uint64, ok bool)
}

// Unchained is Sequence's prev for a change that names no previous one
// (Ethereal's pt is optional): the client applies it as a change it
// cannot check, not as a whole book, which would wipe every level the
// change does not name.
const Unchained = ^uint64(0)

// Call is a method call with JSON params.
type Call struct {
	Method string // the request's method
	Params []byte // its params as raw JSON; nil for none
}

// Errors returned by dialects.
var (
	// ErrUnsupported: the dialect has no such operation (Ethereal has no RPC).
	ErrUnsupported = errors.New("protocol: not supported by this dialect")
	// ErrUnrecognized: a well-formed frame of no known shape.
	ErrUnrecognized = errors.New("protocol: unrecognized frame")
	// ErrMalformed: a frame that is not valid JSON.
	ErrMalformed = errors.New("protocol: malformed frame")
	// ErrInvalidTopic: a topic the dialect cannot express.
	ErrInvalidTopic = errors.New("protocol: invalid topic")
)

// ScanError is the error for a frame whose members did not read to the
// end: unrecognized when it is valid JSON but not an object, else
// malformed.
func ScanError(frame []byte) error {
	if i := jsonscan.SkipSpace(frame, 0); i < len(frame) && frame[i] != '{' {
		if end, err := jsonscan.SkipValue(frame, i); err == nil && jsonscan.AtEnd(frame, end) {
			return ErrUnrecognized
		}
	}
	return ErrMalformed
}
