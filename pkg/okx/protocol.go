package okx

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/wsfan/wsfan/internal/jsonscan"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// dialect speaks OKX's v5 WebSocket API
// (https://www.okx.com/docs-v5/en/#overview-websocket):
//
//	→ {"id":"7","op":"subscribe","args":[{"channel":"tickers","instId":"BTC-USDT"},…]}
//	← {"id":"7","event":"subscribe","arg":{"channel":"tickers","instId":"BTC-USDT"},"connId":"a4d3ae55"}   one for each argument
//	← {"id":"7","event":"error","code":"60018","msg":"Wrong URL or channel:…,instId:… doesn't exist. …","connId":"a4d3ae55"}
//	← {"arg":{"channel":"tickers","instId":"BTC-USDT"},"data":[{…}]}
//	← {"arg":{"channel":"books","instId":"BTC-USDT"},"action":"snapshot","data":[{…,"prevSeqId":-1,"seqId":123456}]}
//
// One request carries as many arguments as its frame may (64 KB), and
// each argument is acknowledged in an event frame of its own echoing the
// request's id (protocol.TopicAcking). A push routes by its arg
// (topic.go) and its payload is the data array; a book's action
// "snapshot" marks it whole (Frame.Snapshot). The connection is kept
// alive with the text frame "ping", answered "pong" (protocol.Venue.Keepalive).
type dialect struct{}

// Protocol returns the client half of the OKX dialect.
func Protocol() protocol.Protocol { return dialect{} }

func (dialect) Name() string { return Name }

// NewTopic reads a topic (topic.go) and encodes its argument once. The
// chained books (books, books-l2-tbt, books50-l2-tbt) are Sequenced; a
// topic names the URL path of the service that serves it (Path: the
// client refuses it on another service's), and a private one (login-only
// books included) the login it needs (Login: the client refuses it on a
// client without an on-connect hook, which okx.Login is).
func (dialect) NewTopic(name string) (*protocol.Topic, error) {
	a, err := parseTopic(name)
	if err != nil {
		return nil, err
	}
	t := &protocol.Topic{
		Name: name, Key: a.key(), Sub: a.appendJSON(nil),
		Private: privateChannels[a.channel], Sequenced: chainedBooks[a.channel],
		Path: channelPath(a.channel), Group: a.channel,
	}
	if t.Private {
		t.Login = "okx.Login" // OKX logs in with op "login" only
	}
	return t, nil
}

// AppendRequest writes an operation, {"id":"ID","op":METHOD,"args":ARGS}:
// params an object becomes the one argument (a login's credentials),
// params an array the arguments.
func (dialect) AppendRequest(dst []byte, id uint64, method string, params []byte) ([]byte, error) {
	dst = appendOpStart(dst, id, method)
	switch p := bytes.TrimSpace(params); {
	case len(p) == 0:
		dst = append(dst, "[]"...)
	case p[0] == '[':
		dst = append(dst, p...)
	default:
		dst = append(append(append(dst, '['), p...), ']')
	}
	return append(dst, '}'), nil
}

// appendOpStart writes an operation up to its arguments:
// {"id":"ID","op":"OP","args":
func appendOpStart(dst []byte, id uint64, op string) []byte {
	dst = append(dst, `{"id":"`...)
	dst = strconv.AppendUint(dst, id, 10)
	dst = append(dst, `","op":`...)
	dst = protocol.AppendJSONString(dst, op)
	return append(dst, `,"args":`...)
}

// maxFrameBytes is the largest subscribe frame written: "the total
// length of multiple channels cannot exceed 64 KB"
// (https://www.okx.com/docs-v5/en/#overview-websocket-subscribe).
const maxFrameBytes = 64 * 1024

// opOverhead is the most an operation adds to its arguments: the
// member names, a 20-digit id and the op.
const opOverhead = 64

// Subscribe writes the topics as subscribe operations: public, then
// private, then login-only books, each group in requests of its own (a
// refusal of the private ones, 60011 "Please log in", or of a book's
// tier, 64003, names no argument and may refuse its whole request), each
// at most chunk arguments when chunk > 0 and at most 64 KB.
func (dialect) Subscribe(b *protocol.Batch, topics []*protocol.Topic, nextID func() uint64, chunk int) {
	encode(b, topics, nextID, chunk, "subscribe")
}

// Unsubscribe writes the topics as unsubscribe operations, as Subscribe.
func (dialect) Unsubscribe(b *protocol.Batch, topics []*protocol.Topic, _ []string, nextID func() uint64, chunk int) {
	encode(b, topics, nextID, chunk, "unsubscribe")
}

func encode(b *protocol.Batch, topics []*protocol.Topic, nextID func() uint64, chunk int, op string) {
	var public, private, books []*protocol.Topic
	for _, t := range topics {
		switch {
		case loginBooks[channelOf(t.Name)]:
			books = append(books, t)
		case t.Private:
			private = append(private, t)
		default:
			public = append(public, t)
		}
	}
	if private == nil && books == nil {
		public = topics // the common case: share the caller's slice
	}
	encodeScope(b, public, nextID, chunk, op)
	encodeScope(b, private, nextID, chunk, op)
	encodeScope(b, books, nextID, chunk, op)
}

func encodeScope(b *protocol.Batch, topics []*protocol.Topic, nextID func() uint64, chunk int, op string) {
	for part, size := range protocol.Runs(topics, chunk, maxFrameBytes, opOverhead) {
		id := nextID()
		m := appendOpStart(b.NewMessage(size), id, op)
		m = append(m, '[')
		for i, t := range part {
			if i > 0 {
				m = append(m, ',')
			}
			m = append(m, t.Sub...)
		}
		m = append(m, "]}"...)
		b.Requests = append(b.Requests, protocol.Request{ID: id, Topics: part, Message: len(b.Messages)})
		b.Messages = append(b.Messages, m)
	}
}

// Ack reads an acknowledgement that came without the request's id (the
// client took it for the oldest request's): it accepts the topic its arg
// names and no other.
func (d dialect) Ack(req *protocol.Request, result []byte, keys []string) error {
	req.AckOne(d.AckedTopic(req, result), keys)
	return nil
}

// AckedTopic implements protocol.TopicAcking (Venue.TopicAcks): an acknowledgement's Result
// is its arg.
func (dialect) AckedTopic(req *protocol.Request, result []byte) int {
	var buf [96]byte
	key, ok := appendRouteKey(buf[:0], result)
	if !ok {
		return -1
	}
	return req.TopicIndex(key)
}

// RefusedTopic implements protocol.TopicAcking: a refusal's Error is the
// whole error frame. It names its argument in an arg member, where it
// has one, or in its message as OKX's 60018 does ("Wrong URL or
// channel:tickers,instId:BTC-USDT-X doesn't exist. …",
// https://www.okx.com/docs-v5/en/#error-code-websocket-public). A
// refusal of the request itself (requestCodes) refuses every topic not
// answered yet; one that names no argument (64003, a fee tier too low
// for a channel) refuses one of them, which the client finds by the
// acknowledgements of the others.
func (dialect) RefusedTopic(req *protocol.Request, frame []byte) (int, bool) {
	var a, msg, code []byte
	m := jsonscan.Object(frame, 0)
	for k, start, more := m.Next(); more; k, start, more = m.Next() {
		end := m.Skip()
		switch string(k) {
		case "arg":
			a = frame[start:end]
		case "msg":
			msg = frame[start:end]
		case "code":
			code = frame[start:end]
		}
	}
	var buf [96]byte
	if a != nil {
		if key, ok := appendRouteKey(buf[:0], a); ok {
			return req.TopicIndex(key), false
		}
	}
	if n, ok := requestID(code); ok && requestCodes[n] {
		return -1, true
	}
	text, _ := jsonscan.String(msg, nil)
	key, named := argKeyInText(buf[:0], text)
	if !named {
		return -1, false
	}
	return req.TopicIndex(key), false
}

// requestCodes refuse a request whatever its arguments
// (https://www.okx.com/docs-v5/en/#error-code-websocket-public): 60011
// "Please log in", 60012 "Invalid request", 60014 "Requests too
// frequent", 60019 "Invalid op", 64007 an internal error. (60013 "Invalid
// args" may be one argument's.)
var requestCodes = map[uint64]bool{60011: true, 60012: true, 60014: true, 60019: true, 64007: true}

// argKeyInText appends the routing key of the argument a refusal's
// message spells, "channel:tickers,instId:BTC-USDT" (arg.text) as the
// documentation shows it, or with a space after each comma as OKX's
// servers have sent it ("channel:index-tickers, instId:NEAR-USDT-SWAP
// doesn't exist"); the spelling ends at the first word that is not a
// KEY:VALUE after a comma. named is false when the message spells none.
func argKeyInText(dst, msg []byte) (key []byte, named bool) {
	i := bytes.Index(msg, []byte("channel:"))
	if i < 0 {
		return dst, false
	}
	var channel []byte
	var route [len(routeFields)][]byte
	for rest := msg[i:]; ; {
		k, after, ok := bytes.Cut(rest, []byte(":"))
		if !ok || len(k) == 0 || bytes.ContainsAny(k, " ,") {
			break
		}
		end := bytes.IndexAny(after, ", ")
		if end < 0 {
			end = len(after)
		}
		switch v := after[:end]; string(k) {
		case "channel":
			channel = v
		default:
			for j, rf := range routeFields {
				if string(k) == rf {
					route[j] = v
				}
			}
		}
		rest = after[end:]
		if len(rest) == 0 || rest[0] != ',' {
			break
		}
		rest = bytes.TrimLeft(rest[1:], " ")
	}
	if len(channel) == 0 {
		return dst, false
	}
	key = append(dst, channel...)
	for j, v := range route {
		if len(v) == 0 {
			continue
		}
		key = append(key, ':')
		if j > 0 {
			key = append(append(key, routeFields[j]...), '=')
		}
		return append(key, v...), true
	}
	return key, true
}

// Classify reads a frame: a push (arg and data), an event (subscribe,
// unsubscribe, error, login, notice, channel-conn-count) or an
// operation's response (id, op, code, data).
func (dialect) Classify(frame []byte, f *protocol.Frame) error {
	err := classify(frame, f)
	if err == nil && f.WantTime && f.Kind == protocol.KindNotification {
		f.Time = venueTime(f.Data)
	}
	return err
}

// classify is Classify but for the venue's stamp.
func classify(frame []byte, f *protocol.Frame) error {
	f.Reset()
	if string(frame) == "pong" { // the keepalive's answer, no JSON
		f.Kind = protocol.KindKeepalive
		return nil
	}
	// Every member is read; a repeated one counts as its last occurrence
	// (as encoding/json decodes it).
	var id, event, a, action, data, code, op, channel []byte
	m := jsonscan.Object(frame, 0)
	for key, start, ok := m.Next(); ok; key, start, ok = m.Next() {
		switch string(key) {
		case "data":
			data = frame[start:m.SkipTail(1)]
		case "arg":
			a = frame[start:m.Skip()]
		case "event":
			event = frame[start:m.Skip()]
		case "id":
			id = frame[start:m.Skip()]
		case "action":
			action = frame[start:m.Skip()]
		case "code":
			code = frame[start:m.Skip()]
		case "op":
			op = frame[start:m.Skip()]
		case "channel":
			channel = frame[start:m.Skip()]
		default:
			m.Skip()
		}
	}
	if m.Err() != nil || !jsonscan.AtEnd(frame, m.End()) {
		return protocol.ScanError(frame)
	}
	switch {
	case event != nil:
		return classifyEvent(frame, event, id, a, code, channel, f)
	case a != nil && data != nil:
		key, ok := appendRouteKey(f.KeyScratch(), a)
		if !ok {
			return protocol.ErrUnrecognized
		}
		f.KeepKey(key)
		f.Kind = protocol.KindNotification
		f.Data = data
		f.Snapshot = jsonscan.StringIs(action, "snapshot")
		return nil
	case code != nil && (op != nil || id != nil):
		// An operation's response ({"id","op","code","msg","data"}): code
		// "0" is success, its result the data.
		f.Kind = protocol.KindResponse
		f.ID, f.HasID = requestID(id)
		if jsonscan.StringIs(code, "0") {
			f.Result = data
			if f.Result == nil {
				f.Result = frame
			}
		} else {
			f.Error = frame
		}
		return nil
	}
	return protocol.ErrUnrecognized
}

// classifyEvent reads an event frame
// (https://www.okx.com/docs-v5/en/#overview-websocket): the
// acknowledgement of one argument (its Result the arg), a refusal (its
// Error the whole frame, whose code and msg the client reads), a login's
// success (its Result the frame), a notice (64008: the connection will be
// closed for a service upgrade, a reconnect now) or a count of
// connections, a notice that routes nowhere.
func classifyEvent(frame, event, id, a, code, channel []byte, f *protocol.Frame) error {
	var name [32]byte
	ev, ok := jsonscan.String(event, name[:0])
	if !ok {
		return protocol.ErrUnrecognized
	}
	switch string(ev) {
	case "subscribe", "unsubscribe":
		if a == nil {
			return protocol.ErrUnrecognized
		}
		f.Kind, f.Result = protocol.KindResponse, a
	case "error":
		f.Kind, f.Error = protocol.KindResponse, frame
	case "login":
		f.Kind, f.Result = protocol.KindResponse, frame
	case "notice":
		f.Kind, f.Data = protocol.KindEvent, frame
		if jsonscan.StringIs(code, codeServiceUpgrade) {
			f.Event = protocol.EventReconnect
		}
		return nil
	case "channel-conn-count":
		f.Kind, f.Data = protocol.KindEvent, frame
		return nil
	case "channel-conn-count-error":
		// The connection's subscriptions of the channel were ended, past
		// the channel's 30 connections a sub-account ("Client will
		// receive the usual subscription acknowledgement followed by the
		// channel-conn-count-error from the connection that the
		// subscription has been terminated",
		// https://www.okx.com/docs-v5/en/#overview-websocket-connection-count-limit):
		// Key is the channel, every such topic's Group.
		if !f.DecodeKey(channel) {
			return protocol.ErrUnrecognized
		}
		f.Kind, f.Data = protocol.KindEnded, frame
		return nil
	default:
		return protocol.ErrUnrecognized
	}
	f.ID, f.HasID = requestID(id)
	return nil
}

// requestID reads a request id as OKX echoes it: the string the client
// sent (digits, as this client writes them), or a number.
func requestID(raw []byte) (uint64, bool) {
	if len(raw) > 0 && raw[0] == '"' {
		var buf [24]byte
		s, ok := jsonscan.String(raw, buf[:0])
		if !ok {
			return 0, false
		}
		raw = s
	}
	return jsonscan.Uint(raw)
}

// codeServiceUpgrade is the notice's code: "The connection will soon be
// closed for a service upgrade. Please reconnect." (64008,
// https://www.okx.com/docs-v5/en/#overview-websocket-notification).
const codeServiceUpgrade = "64008"

func (dialect) HeartbeatReply(dst []byte, _ uint64) []byte { return dst }
func (dialect) Handshake() []protocol.Call                 { return nil }

// Sequence reads a chained book push's first data item: seqId and
// prevSeqId
// (https://www.okx.com/docs-v5/en/#order-book-trading-market-data-ws-order-book-channel,
// "Sequence ID"). Both come back one more than OKX's, so that a
// snapshot's prevSeqId of -1 is the 0 that names no previous message and
// a real seqId of 0 ("the smallest possible sequence ID value is 0") is
// not taken for "none". A push without prevSeqId is protocol.Unchained.
// The chain rule is prevSeqId == the last seqId, which also holds for
// OKX's two exceptions: a quiet book's empty update whose seqId equals
// its prevSeqId, and a sequence reset after maintenance, whose seqId is
// smaller than its prevSeqId.
func (dialect) Sequence(data []byte) (id, prev uint64, ok bool) {
	seq, prevSeq, found := seqIDs(data)
	if !found || seq == nil {
		return 0, 0, false
	}
	s, ok := parseSeq(seq)
	if !ok || s < 0 {
		return 0, 0, false
	}
	if prevSeq == nil {
		return uint64(s) + 1, protocol.Unchained, true
	}
	p, ok := parseSeq(prevSeq)
	if !ok || p < -1 {
		return 0, 0, false
	}
	return uint64(s) + 1, uint64(p + 1), true
}

// seqIDs returns the raw seqId and prevSeqId of a book push's first data
// item (nil where absent; found is false when there is none).
func seqIDs(data []byte) (seq, prev []byte, found bool) {
	_ = jsonscan.Elements(data, 0, func(item []byte) bool {
		m := jsonscan.Object(item, 0)
		for k, start, more := m.Next(); more; k, start, more = m.Next() {
			end := m.Skip()
			switch string(k) {
			case "seqId":
				seq = item[start:end]
			case "prevSeqId":
				prev = item[start:end]
			}
		}
		found = m.Err() == nil
		return false // the first item
	})
	return seq, prev, found
}

// parseSeq reads a sequence number: an integer, -1 at the least.
func parseSeq(raw []byte) (int64, bool) {
	v, err := strconv.ParseInt(strings.TrimSpace(string(raw)), 10, 64)
	return v, err == nil
}

// ClassifyError tells 60014 "Requests too frequent"
// (https://www.okx.com/docs-v5/en/#error-code-websocket-public): a
// request refused for the pace of requests.
func (dialect) ClassifyError(code int, _ string) protocol.ErrorClass {
	return protocol.ErrorClass{Throttled: code == CodeTooFrequent}
}
