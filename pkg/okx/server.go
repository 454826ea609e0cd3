package okx

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/wsfan/wsfan/internal/jsonscan"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// server is OKX's server half: operations {"id","op","args"} answered by
// event frames, one for each argument of a subscribe or unsubscribe
// (protocol.TopicAnswering), pushes {"arg","action","data"}, and the
// text keepalive (protocol.Venue.Keepalive).
type server struct{}

// Server returns the server half of the OKX dialect.
func Server() protocol.Server { return server{} }

func (server) Name() string           { return Name }
func (server) RPC() bool              { return true }
func (server) Batches() bool          { return false }
func (server) SubscriptionID() string { return "" }

// Private reports whether topic is one of OKX's private channels.
func (server) Private(topic string) bool { return privateChannels[channelOf(topic)] }

// connID is the connId this package's servers stamp on their events
// (OKX: the connection's id, 8 hex digits).
const connID = "7773666e"

// ParseFrame reads one operation. A subscribe's or unsubscribe's
// arguments become topics as NewTopic takes them (topic.go); a login's
// one argument is its params; any other operation is a call of the op
// with the arguments as params.
func (server) ParseFrame(dst []protocol.Incoming, frame []byte) ([]protocol.Incoming, bool, *protocol.Error) {
	var id, op, args []byte
	m := jsonscan.Object(frame, 0)
	for k, start, more := m.Next(); more; k, start, more = m.Next() {
		end := m.Skip()
		switch string(k) {
		case "id":
			id = frame[start:end]
		case "op":
			op = frame[start:end]
		case "args":
			args = frame[start:end]
		}
	}
	if m.Err() != nil || !jsonscan.AtEnd(frame, m.End()) {
		return dst, false, invalidRequest(frame)
	}
	if id != nil && id[0] != '"' {
		id = nil // OKX's ids are strings: a number is no id it echoes
	}
	req := protocol.Incoming{ID: id}
	name, ok := jsonscan.AppendString(nil, op)
	if !ok || len(args) == 0 || args[0] != '[' {
		req.Err = invalidRequest(frame)
		return append(dst, req), false, nil
	}
	req.Method = string(name)
	switch req.Method {
	case "subscribe":
		req.Op = protocol.OpSubscribe
	case "unsubscribe":
		req.Op = protocol.OpUnsubscribe
	case "login":
		req.Params, _ = jsonscan.First(args, 0) // nil when malformed or empty: the login refuses it
		return append(dst, req), false, nil
	default:
		req.Params = args
		return append(dst, req), false, nil
	}
	err := jsonscan.Elements(args, 0, func(e []byte) bool {
		topic, ok := topicOfArg(e)
		if !ok {
			return false
		}
		req.Topics = append(req.Topics, topic)
		req.Private = req.Private || privateChannels[channelOf(topic)]
		return true
	})
	if err != nil || len(req.Topics) == 0 {
		req.Topics, req.Err = nil, invalidRequest(frame)
	}
	return append(dst, req), false, nil
}

// invalidRequest is 60012, "Invalid request: FRAME", as OKX's failure
// examples show it, followed by the shape of an OKX request: a frame of
// another dialect sent here is told which one this server speaks. The
// frame is quoted up to quotedFrameBytes, so that a client's megabyte of
// garbage is not answered with a megabyte.
func invalidRequest(frame []byte) *protocol.Error {
	quoted := string(frame)
	if len(frame) > quotedFrameBytes {
		quoted = fmt.Sprintf("%s… (%d bytes)", strings.ToValidUTF8(string(frame[:quotedFrameBytes]), ""), len(frame))
	}
	return &protocol.Error{Code: CodeInvalidRequest, Message: "Invalid request: " + quoted +
		` (this server speaks the okx dialect, OKX's v5 WebSocket API: {"op":"subscribe","args":[{"channel":"tickers","instId":"BTC-USDT"}]})`}
}

// quotedFrameBytes is how much of an invalid frame its refusal quotes.
const quotedFrameBytes = 256

// topicOfArg reads a subscription argument, an object of string members
// with a channel, as the topic it names: CHANNEL, CHANNEL:INSTID, or
// CHANNEL:KEY=VALUE,… in the argument's order.
func topicOfArg(raw []byte) (string, bool) {
	var a arg
	m := jsonscan.Object(raw, 0)
	for k, start, more := m.Next(); more; k, start, more = m.Next() {
		end := m.Skip()
		v, ok := jsonscan.AppendString(nil, raw[start:end])
		if !ok {
			return "", false
		}
		if string(k) == "channel" {
			a.channel = string(v)
			continue
		}
		if len(v) > 0 {
			a.fields = append(a.fields, [2]string{string(k), string(v)})
		}
	}
	if m.Err() != nil || a.channel == "" {
		return "", false
	}
	name := a.channel
	switch {
	case len(a.fields) == 1 && a.fields[0][0] == "instId":
		name += ":" + a.fields[0][1]
	case len(a.fields) > 0:
		parts := make([]string, len(a.fields))
		for i, f := range a.fields {
			parts[i] = f[0] + "=" + f[1]
		}
		name += ":" + strings.Join(parts, ",")
	}
	if _, err := parseTopic(name); err != nil {
		return "", false
	}
	return name, true
}

// AppendResult appends the answer to operation id. A result that is an
// event frame (a login's: {"event":"login","code":"0",…}) is written as
// it is, with the id; any other is an operation's response,
// {"id":ID,"code":"0","msg":"","data":RESULT}.
func (server) AppendResult(dst, id, result []byte) []byte {
	if isEventFrame(result) {
		dst = append(dst, '{')
		if len(id) > 0 {
			dst = append(append(append(dst, `"id":`...), id...), ',')
		}
		n := len(dst)
		m := jsonscan.Object(result, 0)
		for k, start, more := m.Next(); more; k, start, more = m.Next() {
			end := m.Skip()
			if string(k) == "id" {
				continue
			}
			if len(dst) > n {
				dst = append(dst, ',')
			}
			dst = protocol.AppendJSONString(dst, string(k))
			dst = append(append(dst, ':'), result[start:end]...)
		}
		return append(dst, '}')
	}
	dst = append(dst, '{')
	if len(id) > 0 {
		dst = append(append(append(dst, `"id":`...), id...), ',')
	}
	if len(result) == 0 {
		result = []byte("[]")
	}
	dst = append(dst, `"code":"0","msg":"","data":`...)
	return append(append(dst, result...), '}')
}

// isEventFrame reports whether v is an object with an "event" member.
func isEventFrame(v []byte) bool {
	v = bytes.TrimSpace(v)
	if len(v) == 0 || v[0] != '{' {
		return false
	}
	found := false
	m := jsonscan.Object(v, 0)
	for k, _, more := m.Next(); more; k, _, more = m.Next() {
		m.Skip()
		found = found || string(k) == "event"
	}
	return found && m.Err() == nil
}

// AppendError appends an error event,
// {"id":ID,"event":"error","code":"CODE","msg":MSG,"connId":…}. A
// JSON-RPC code (the sidecar's and the test server's own refusals) is
// written as the OKX code closest to it.
func (server) AppendError(dst, id []byte, code int, message string, _ []byte) []byte {
	dst = append(dst, '{')
	if len(id) > 0 {
		dst = append(append(append(dst, `"id":`...), id...), ',')
	}
	dst = append(dst, `"event":"error","code":"`...)
	dst = strconv.AppendInt(dst, int64(okxCode(code)), 10)
	dst = append(dst, `","msg":`...)
	dst = protocol.AppendJSONString(dst, message)
	return append(dst, `,"connId":"`+connID+`"}`...)
}

// okxCode names a JSON-RPC error code as OKX's nearest; OKX's own codes
// (positive) pass.
func okxCode(code int) int {
	switch {
	case code > 0:
		return code
	case code == protocol.CodeInvalidParams:
		return CodeInvalidArgs
	case code == protocol.CodeMethodNotFound:
		return CodeInvalidOp
	case code == protocol.CodeInternalError:
		return CodeInternalError
	case code == -32005: // a JSON-RPC server's "limit exceeded"
		return CodeTooFrequent
	}
	return CodeInvalidRequest
}

// AppendSubscribed appends the arguments of keys as a JSON array: what a
// one-frame answer would carry. OKX answers each argument in a frame of
// its own (AppendTopicAnswers), which the servers write instead.
func (server) AppendSubscribed(dst []byte, keys []string) []byte { return appendArgs(dst, keys) }

// AppendUnsubscribed is AppendSubscribed for an unsubscribe.
func (server) AppendUnsubscribed(dst []byte, keys []string) []byte { return appendArgs(dst, keys) }

func appendArgs(dst []byte, keys []string) []byte {
	dst = append(dst, '[')
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = argOf(k).appendJSON(dst)
	}
	return append(dst, ']')
}

// argOf is the argument of a topic this package wrote or read.
func argOf(topic string) arg {
	a, err := parseTopic(topic)
	if err != nil {
		return arg{channel: topic}
	}
	return a
}

// AppendTopicAnswers implements protocol.TopicAnswering: an event frame
// for each argument, {"id":ID,"event":"subscribe","arg":ARG,"connId":…}
// (https://www.okx.com/docs-v5/en/#overview-websocket-subscribe).
func (server) AppendTopicAnswers(dst, id []byte, op protocol.Op, keys []string) []byte {
	event := "subscribe"
	if op == protocol.OpUnsubscribe {
		event = "unsubscribe"
	}
	for _, k := range keys {
		dst = append(dst, protocol.RecordSeparator, '{')
		if len(id) > 0 {
			dst = append(append(append(dst, `"id":`...), id...), ',')
		}
		dst = append(dst, `"event":"`+event+`","arg":`...)
		dst = argOf(k).appendJSON(dst)
		dst = append(dst, `,"connId":"`+connID+`"}`...)
	}
	return dst
}

// AppendTopicRefusal implements protocol.TopicAnswering: an error event
// whose message names the argument where it has room for it, as 60018's
// does ("Wrong URL or {0} doesn't exist").
func (s server) AppendTopicRefusal(dst, id []byte, key string, e *protocol.Error) []byte {
	msg := strings.ReplaceAll(e.Message, "{0}", argOf(key).text())
	return s.AppendError(append(dst, protocol.RecordSeparator), id, e.Code, msg, nil)
}

// AppendNotification appends a push of topic carrying data (the data
// array); a chained book's push is an "update".
func (s server) AppendNotification(dst []byte, topic, subID string, data []byte) []byte {
	prefix, suffix := s.Envelope(topic, subID)
	return append(append(append(dst, prefix...), data...), suffix...)
}

// AppendSnapshotNotification appends a chained book's "snapshot" push.
func (s server) AppendSnapshotNotification(dst []byte, topic, subID string, data []byte) []byte {
	prefix, suffix := s.SnapshotEnvelope(topic, subID)
	return append(append(append(dst, prefix...), data...), suffix...)
}

// Envelope is {"arg":ARG,"data": … }, with "action":"update" for a
// chained book.
func (server) Envelope(topic, _ string) (prefix, suffix []byte) {
	return envelope(topic, "update"), []byte{'}'}
}

// SnapshotEnvelope is Envelope with "action":"snapshot" for a chained
// book.
func (server) SnapshotEnvelope(topic, _ string) (prefix, suffix []byte) {
	return envelope(topic, "snapshot"), []byte{'}'}
}

func envelope(topic, action string) []byte {
	a := argOf(topic)
	p := a.appendJSON([]byte(`{"arg":`))
	if chainedBooks[a.channel] {
		p = append(p, `,"action":"`+action+`"`...)
	}
	return append(p, `,"data":`...)
}

func (server) AppendHeartbeat(dst []byte) []byte { return dst }

// AppendReconnectNotice appends the notice OKX sends 60 s before it
// closes connections for a service upgrade
// (https://www.okx.com/docs-v5/en/#overview-websocket-notification).
func (server) AppendReconnectNotice(dst []byte) []byte {
	return append(dst, `{"event":"notice","code":"`+codeServiceUpgrade+`","msg":"The connection will soon be closed for a service upgrade. Please reconnect.","connId":"`+connID+`"}`...)
}

// AnswerKeepalive answers the text "ping" with "pong"
// (https://www.okx.com/docs-v5/en/#overview-websocket-connect).
func (server) AnswerKeepalive(frame []byte) ([]byte, bool) {
	if string(frame) != "ping" {
		return nil, false
	}
	return []byte("pong"), true
}

var _ protocol.TopicAnswering = server{}
