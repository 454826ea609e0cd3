package kraken

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/wsfan/wsfan/internal/jsonscan"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// server is Kraken's server half: requests {"method","params","req_id"}
// answered symbol by symbol for a subscribe or unsubscribe
// (protocol.TopicAnswering), channel messages {"channel","type","data"},
// and the application-level ping (AnswerKeepalive).
type server struct{}

// Server returns the server half of the Kraken dialect.
func Server() protocol.Server { return server{} }

func (server) Name() string           { return Name }
func (server) RPC() bool              { return true }
func (server) Batches() bool          { return false }
func (server) SubscriptionID() string { return "" }

// Private reports whether topic is one of Kraken's private channels.
func (server) Private(topic string) bool {
	t, err := parseTopic(topic)
	return err == nil && privateChannels[t.channel]
}

// ParseFrame reads one request. A subscribe's or unsubscribe's params
// become a topic for each symbol (topic.go); any other method is a call
// with its params.
func (server) ParseFrame(dst []protocol.Incoming, frame []byte) ([]protocol.Incoming, bool, *protocol.Error) {
	var id, method, params []byte
	m := jsonscan.Object(frame, 0)
	for k, start, more := m.Next(); more; k, start, more = m.Next() {
		end := m.Skip()
		switch string(k) {
		case "req_id":
			id = frame[start:end]
		case "method":
			method = frame[start:end]
		case "params":
			params = frame[start:end]
		}
	}
	if m.Err() != nil || !jsonscan.AtEnd(frame, m.End()) {
		return dst, false, invalidRequest(frame)
	}
	if _, ok := requestID(id); !ok {
		id = nil // Kraken's req_id is an integer
	}
	req := protocol.Incoming{ID: id}
	name, ok := jsonscan.AppendString(nil, method)
	if !ok {
		req.Err = invalidRequest(frame)
		return append(dst, req), false, nil
	}
	req.Method = string(name)
	switch req.Method {
	case "subscribe":
		req.Op = protocol.OpSubscribe
	case "unsubscribe":
		req.Op = protocol.OpUnsubscribe
	default:
		req.Params, req.Credential = params, paramsToken(params)
		return append(dst, req), false, nil
	}
	topics, private, ok := topicsOfParams(params)
	if !ok {
		req.Err = invalidRequest(frame)
		return append(dst, req), false, nil
	}
	req.Topics, req.Private = topics, private
	if private {
		req.Credential = paramsToken(params)
	}
	return append(dst, req), false, nil
}

// paramsToken returns the token a request's params carry (raw JSON), or
// nil.
func paramsToken(params []byte) []byte {
	var tok []byte
	m := jsonscan.Object(params, 0)
	for k, start, more := m.Next(); more; k, start, more = m.Next() {
		end := m.Skip()
		if string(k) == "token" {
			tok = params[start:end]
		}
	}
	if m.Err() != nil {
		return nil
	}
	return tok
}

// topicsOfParams reads a subscribe's params as the topics they name: the
// channel with each symbol, and its depth or interval where given.
func topicsOfParams(params []byte) (topics []string, private, ok bool) {
	var t topic
	var symbols []byte
	m := jsonscan.Object(params, 0)
	for k, start, more := m.Next(); more; k, start, more = m.Next() {
		end := m.Skip()
		v := params[start:end]
		switch string(k) {
		case "channel":
			c, ok := jsonscan.AppendString(nil, v)
			if !ok {
				return nil, false, false
			}
			t.channel = string(c)
		case "symbol":
			symbols = v
		case "depth", "interval":
			n, ok := jsonscan.Uint(v)
			if !ok || n > 1<<20 {
				return nil, false, false
			}
			t.param, t.hasParam = int(n), true
		}
	}
	if m.Err() != nil || t.channel == "" {
		return nil, false, false
	}
	if plainChannels[t.channel] {
		return []string{t.channel}, privateChannels[t.channel], true
	}
	err := jsonscan.Elements(symbols, 0, func(e []byte) bool {
		s, ok := jsonscan.AppendString(nil, e)
		if !ok {
			return false
		}
		t.symbol = string(s)
		if _, err := parseTopic(t.name()); err != nil {
			return false
		}
		topics = append(topics, t.name())
		return true
	})
	if err != nil || len(topics) == 0 {
		return nil, false, false
	}
	return topics, false, true
}

// invalidRequest refuses a frame that is no request of this dialect,
// naming the shape of one: a frame of another dialect sent here is told
// which one this server speaks. The frame is quoted up to 256 bytes.
func invalidRequest(frame []byte) *protocol.Error {
	quoted := string(frame)
	if len(frame) > 256 {
		quoted = fmt.Sprintf("%s… (%d bytes)", strings.ToValidUTF8(string(frame[:256]), ""), len(frame))
	}
	return &protocol.Error{Code: protocol.CodeInvalidRequest, Message: "EGeneral:Invalid arguments: " + quoted +
		` (this server speaks the kraken dialect, Kraken's Spot WebSocket v2: {"method":"subscribe","params":{"channel":"ticker","symbol":["BTC/USD"]},"req_id":1})`}
}

// stamp is a time as Kraken writes time_in and time_out: RFC 3339, UTC,
// microseconds.
func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000000Z") }

// appendTimes appends the time_in and time_out members, both now.
func appendTimes(dst []byte) []byte {
	now := stamp(time.Now())
	return append(dst, `,"time_in":"`+now+`","time_out":"`+now+`"`...)
}

// appendReqID appends the req_id member when the request had one.
func appendReqID(dst, id []byte) []byte {
	if len(id) == 0 {
		return dst
	}
	return append(append(dst, `,"req_id":`...), id...)
}

// AppendResult appends a method's success, {"result":RESULT,
// "success":true,"time_in":…,"time_out":…,"req_id":ID}. Kraken's answers
// also name their method; the server half is not told it, and the
// client reads none.
func (server) AppendResult(dst, id, result []byte) []byte {
	if len(result) == 0 {
		result = []byte("{}")
	}
	dst = append(append(append(dst, `{"result":`...), result...), `,"success":true`...)
	return append(appendReqID(appendTimes(dst), id), '}')
}

// AppendError appends a refusal, {"error":MESSAGE,"success":false,
// "time_in":…,"time_out":…,"req_id":ID}: Kraken's refusal is its error
// text alone ("EOrder:Insufficient funds",
// https://docs.kraken.com/api/docs/websocket-v2/add_order), which the
// client reads as an RPCError of that Message and Code 0. Kraken's
// answers also name their method; the server half is not told it, and
// the client reads none.
func (server) AppendError(dst, id []byte, _ int, message string, _ []byte) []byte {
	dst = append(dst, `{"error":`...)
	dst = protocol.AppendJSONString(dst, message)
	dst = append(dst, `,"success":false`...)
	return append(appendReqID(appendTimes(dst), id), '}')
}

// AppendSubscribed appends the results of keys as a JSON array: what a
// one-frame answer would carry. Kraken answers each symbol in a frame of
// its own (AppendTopicAnswers), which the servers write instead.
func (server) AppendSubscribed(dst []byte, keys []string) []byte { return appendResults(dst, keys) }

// AppendUnsubscribed is AppendSubscribed for an unsubscribe.
func (server) AppendUnsubscribed(dst []byte, keys []string) []byte { return appendResults(dst, keys) }

func appendResults(dst []byte, keys []string) []byte {
	dst = append(dst, '[')
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendResult(dst, k)
	}
	return append(dst, ']')
}

// appendResult appends the result object of a subscribe of topic name:
// its channel, a book's depth, an ohlc's interval, the snapshot flag
// and its symbol (https://docs.kraken.com/api/docs/websocket-v2/book,
// "Subscribe Response").
func appendResult(dst []byte, name string) []byte {
	t, err := parseTopic(name)
	if err != nil {
		t = topic{channel: name}
	}
	dst = append(dst, `{"channel":`...)
	dst = protocol.AppendJSONString(dst, t.channel)
	switch t.channel {
	case "book":
		dst = strconv.AppendInt(append(dst, `,"depth":`...), int64(t.depth()), 10)
	case "ohlc":
		interval := 1
		if t.hasParam {
			interval = t.param
		}
		dst = strconv.AppendInt(append(dst, `,"interval":`...), int64(interval), 10)
	}
	dst = append(dst, `,"snapshot":true`...)
	if t.symbol != "" {
		dst = append(dst, `,"symbol":`...)
		dst = protocol.AppendJSONString(dst, t.symbol)
	}
	return append(dst, '}')
}

// AppendTopicAnswers implements protocol.TopicAnswering: a frame for
// each symbol, {"method":"subscribe","result":{…},"success":true,…}.
func (server) AppendTopicAnswers(dst, id []byte, op protocol.Op, keys []string) []byte {
	method := "subscribe"
	if op == protocol.OpUnsubscribe {
		method = "unsubscribe"
	}
	for _, k := range keys {
		dst = append(dst, protocol.RecordSeparator)
		dst = append(dst, `{"method":"`+method+`","result":`...)
		dst = appendResult(dst, k)
		dst = append(dst, `,"success":true`...)
		dst = append(appendReqID(appendTimes(dst), id), '}')
	}
	return dst
}

// AppendTopicRefusal implements protocol.TopicAnswering: a failure
// naming the symbol it refuses ({0} in e's message is the symbol), as
// Kraken's subscribe failures do.
func (s server) AppendTopicRefusal(dst, id []byte, key string, e *protocol.Error) []byte {
	t, err := parseTopic(key)
	if err != nil {
		t = topic{channel: key}
	}
	name := t.symbol
	if name == "" {
		name = t.channel
	}
	dst = append(dst, protocol.RecordSeparator)
	dst = append(dst, `{"error":`...)
	dst = protocol.AppendJSONString(dst, strings.ReplaceAll(e.Message, "{0}", name))
	dst = append(dst, `,"method":"subscribe","success":false`...)
	if t.symbol != "" {
		dst = append(dst, `,"symbol":`...)
		dst = protocol.AppendJSONString(dst, t.symbol)
	}
	return append(appendReqID(appendTimes(dst), id), '}')
}

// AppendNotification appends a channel's "update" message carrying data
// (the data array).
func (s server) AppendNotification(dst []byte, topic, subID string, data []byte) []byte {
	prefix, suffix := s.Envelope(topic, subID)
	return append(append(append(dst, prefix...), data...), suffix...)
}

// AppendSnapshotNotification appends a channel's "snapshot" message.
func (s server) AppendSnapshotNotification(dst []byte, topic, subID string, data []byte) []byte {
	prefix, suffix := s.SnapshotEnvelope(topic, subID)
	return append(append(append(dst, prefix...), data...), suffix...)
}

// Envelope is {"channel":CHANNEL,"type":"update","data": … }.
func (server) Envelope(topic, _ string) (prefix, suffix []byte) {
	return envelope(topic, "update"), []byte{'}'}
}

// SnapshotEnvelope is Envelope with type "snapshot".
func (server) SnapshotEnvelope(topic, _ string) (prefix, suffix []byte) {
	return envelope(topic, "snapshot"), []byte{'}'}
}

func envelope(name, typ string) []byte {
	channel := name
	if t, err := parseTopic(name); err == nil {
		channel = t.channel
	}
	p := protocol.AppendJSONString([]byte(`{"channel":`), channel)
	return append(p, `,"type":"`+typ+`","data":`...)
}

// AppendHeartbeat appends nothing: Kraken's heartbeat channel asks for
// no answer (a KindEvent to the client, not a KindHeartbeat).
func (server) AppendHeartbeat(dst []byte) []byte { return dst }

// AppendReconnectNotice appends nothing: Kraken documents no notice
// before it closes a connection.
func (server) AppendReconnectNotice(dst []byte) []byte { return dst }

// AnswerKeepalive answers a ping, {"method":"ping"} with an optional
// req_id, with a pong echoing it
// (https://docs.kraken.com/api/docs/websocket-v2/ping).
func (server) AnswerKeepalive(frame []byte) ([]byte, bool) {
	var method, id []byte
	m := jsonscan.Object(frame, 0)
	for k, start, more := m.Next(); more; k, start, more = m.Next() {
		end := m.Skip()
		switch string(k) {
		case "method":
			method = frame[start:end]
		case "req_id":
			id = frame[start:end]
		}
	}
	if m.Err() != nil || !jsonscan.StringIs(method, "ping") {
		return nil, false
	}
	if _, ok := jsonscan.Uint(id); !ok {
		id = nil
	}
	dst := append(appendTimes([]byte(pongPrefix)), '}')
	if id != nil {
		dst = append(appendReqID(dst[:len(dst)-1], id), '}')
	}
	return dst, true
}

var _ protocol.TopicAnswering = server{}
