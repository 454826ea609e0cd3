package kraken

import (
	"bytes"
	"strconv"

	"github.com/wsfan/wsfan/internal/jsonscan"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// dialect speaks Kraken's Spot WebSocket v2
// (https://docs.kraken.com/api/docs/websocket-v2/book and its sibling
// pages):
//
//	→ {"method":"subscribe","params":{"channel":"book","symbol":["BTC/USD","ETH/USD"],"depth":10},"req_id":7}
//	← {"method":"subscribe","result":{"channel":"book","depth":10,"snapshot":true,"symbol":"BTC/USD"},"success":true,"time_in":…,"time_out":…,"req_id":7}   one for each symbol
//	← {"error":"Currency pair not supported","method":"subscribe","req_id":7,"success":false,"symbol":"BTC/US",…}
//	← {"channel":"book","type":"snapshot","data":[{"symbol":"BTC/USD","bids":[…],"asks":[…],"checksum":…,"timestamp":…}]}
//	← {"channel":"heartbeat"}
//
// One request subscribes the symbols of one channel (and depth or
// interval), each acknowledged in a frame of its own echoing the req_id
// (Venue.TopicAcks). A message routes by its channel and its first
// data item's symbol (and an ohlc's interval); its payload is the data
// array, and type "snapshot" marks it whole (Frame.Snapshot). The
// connection is kept alive with the application-level
// {"method":"ping"}, answered pong (Venue.Keepalive).
//
// A private subscribe or unsubscribe, and a call of a private method
// (add_order, cancel_order, …), carries the connection's token in its
// params; Login fetches one for each connection and leaves it in the
// dialect's session (login.go), which the encoders read.
type dialect struct {
	s *session // nil for a value made without Protocol: no token
}

// Protocol returns the client half of the Kraken dialect. Each value
// has a session of its own, where Login leaves each new connection's
// token: give each Client its own (a Pool's clients share theirs, and
// each connection's subscribes then carry the token its newest
// connection fetched, which Kraken takes as well).
func Protocol() protocol.Protocol { return dialect{s: new(session)} }

func (dialect) Name() string { return Name }

// NewTopic reads a topic (topic.go) and encodes its piece of a subscribe
// once: a symbol's JSON string, or the params of a channel of no symbol.
func (dialect) NewTopic(name string) (*protocol.Topic, error) {
	t, err := parseTopic(name)
	if err != nil {
		return nil, err
	}
	pt := &protocol.Topic{Name: name, Key: t.key(), Private: privateChannels[t.channel]}
	if pt.Private {
		pt.Login = "kraken.Login"
	}
	if t.symbol == "" {
		pt.Sub = appendParams(nil, t, nil, "")
	} else {
		pt.Sub = protocol.AppendJSONString(nil, t.symbol)
	}
	return pt, nil
}

// appendParams writes a subscribe's params: the channel of t, the
// symbols (JSON strings) when it has some, its depth or interval, and a
// private channel's token when there is one.
func appendParams(dst []byte, t topic, symbols []*protocol.Topic, token string) []byte {
	dst = append(dst, `{"channel":`...)
	dst = protocol.AppendJSONString(dst, t.channel)
	if t.symbol != "" {
		dst = append(dst, `,"symbol":[`...)
		for i, s := range symbols {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, s.Sub...)
		}
		dst = append(dst, ']')
	}
	if t.hasParam {
		dst = append(dst, ',')
		dst = protocol.AppendJSONString(dst, symbolChannels[t.channel])
		dst = strconv.AppendInt(append(dst, ':'), int64(t.param), 10)
	}
	if privateChannels[t.channel] && token != "" {
		dst = protocol.AppendJSONString(append(dst, `,"token":`...), token)
	}
	return append(dst, '}')
}

// AppendRequest writes {"method":METHOD,"params":PARAMS,"req_id":ID},
// without params when there are none. A private method's params
// (privateMethods) get the connection's token as their first member
// when they name none and Login left one.
func (d dialect) AppendRequest(dst []byte, id uint64, method string, params []byte) ([]byte, error) {
	dst = append(dst, `{"method":`...)
	dst = protocol.AppendJSONString(dst, method)
	p := bytes.TrimSpace(params)
	switch tok := d.token(); {
	case tok != "" && privateMethods[method] && tokenless(p):
		dst = protocol.AppendJSONString(append(dst, `,"params":{"token":`...), tok)
		if len(p) == 0 {
			dst = append(dst, '}')
			break
		}
		if inner := bytes.TrimSpace(p[1:]); inner[0] != '}' {
			dst = append(dst, ',')
		}
		dst = append(dst, p[1:]...)
	case len(p) > 0:
		dst = append(append(dst, `,"params":`...), p...)
	}
	dst = strconv.AppendUint(append(dst, `,"req_id":`...), id, 10)
	return append(dst, '}'), nil
}

// privateMethods are the methods whose params carry the token: Kraken's
// trading methods (https://docs.kraken.com/api/docs/websocket-v2/add_order
// and its siblings).
var privateMethods = map[string]bool{
	"add_order": true, "amend_order": true, "edit_order": true, "cancel_order": true,
	"cancel_all": true, "cancel_all_orders_after": true, "batch_add": true, "batch_cancel": true,
}

// tokenless reports whether params are none, or an object naming no
// token.
func tokenless(params []byte) bool {
	if len(params) == 0 {
		return true
	}
	m := jsonscan.Object(params, 0)
	for k, _, more := m.Next(); more; k, _, more = m.Next() {
		m.Skip()
		if string(k) == "token" {
			return false
		}
	}
	return m.Err() == nil && jsonscan.AtEnd(params, m.End())
}

// token is the token Login left for the connection, or "".
func (d dialect) token() string {
	if d.s == nil {
		return ""
	}
	return d.s.token()
}

// maxFrameBytes bounds a subscribe frame: Kraken documents no limit, and
// this keeps a restore of thousands of symbols in frames of sane size.
const maxFrameBytes = 16 * 1024

// opOverhead is the most a request adds to its symbols.
const opOverhead = 96

// Subscribe writes the topics as subscribe requests: one a channel (and
// depth or interval) for the symbols, at most chunk symbols each when
// chunk > 0; one a topic for a channel of no symbol.
func (d dialect) Subscribe(b *protocol.Batch, topics []*protocol.Topic, nextID func() uint64, chunk int) {
	encode(b, topics, nextID, chunk, "subscribe", d.token())
}

// Unsubscribe writes the topics as unsubscribe requests, as Subscribe.
func (d dialect) Unsubscribe(b *protocol.Batch, topics []*protocol.Topic, _ []string, nextID func() uint64, chunk int) {
	encode(b, topics, nextID, chunk, "unsubscribe", d.token())
}

func encode(b *protocol.Batch, topics []*protocol.Topic, nextID func() uint64, chunk int, method, token string) {
	var order []string
	groups := make(map[string][]*protocol.Topic)
	first := make(map[string]topic)
	for _, pt := range topics {
		t, err := parseTopic(pt.Name)
		if err != nil {
			continue // NewTopic made every topic: it parses
		}
		g := t.group()
		if t.symbol == "" {
			g = pt.Name + "\x00" + strconv.Itoa(len(order)) // one request each
		}
		if _, ok := groups[g]; !ok {
			order = append(order, g)
			first[g] = t
		}
		groups[g] = append(groups[g], pt)
	}
	for _, g := range order {
		t := first[g]
		for part, size := range protocol.Runs(groups[g], chunk, maxFrameBytes, opOverhead) {
			id := nextID()
			m := append(b.NewMessage(size), `{"method":"`+method+`","params":`...)
			m = appendParams(m, t, part, token)
			m = strconv.AppendUint(append(m, `,"req_id":`...), id, 10)
			m = append(m, '}')
			b.Requests = append(b.Requests, protocol.Request{ID: id, Topics: part, Message: len(b.Messages)})
			b.Messages = append(b.Messages, m)
		}
	}
}

// Ack reads an acknowledgement the client took for the oldest request's:
// it accepts the topic its result names and no other.
func (d dialect) Ack(req *protocol.Request, result []byte, keys []string) error {
	req.AckOne(d.AckedTopic(req, result), keys)
	return nil
}

// AckedTopic implements protocol.TopicAcking: an acknowledgement's
// Result is its result object, naming the channel, the symbol and, for
// ohlc, the interval.
func (dialect) AckedTopic(req *protocol.Request, result []byte) int {
	var buf [96]byte
	key, ok := appendAckKey(buf[:0], result)
	if !ok {
		return -1
	}
	return req.TopicIndex(key)
}

// appendAckKey appends the routing key of an acknowledgement's result:
// what routeKey reads from the topic's messages.
func appendAckKey(dst, result []byte) ([]byte, bool) {
	var channel, symbol, interval []byte
	m := jsonscan.Object(result, 0)
	for k, start, more := m.Next(); more; k, start, more = m.Next() {
		end := m.Skip()
		switch string(k) {
		case "channel":
			channel = result[start:end]
		case "symbol":
			symbol = result[start:end]
		case "interval":
			interval = result[start:end]
		}
	}
	if m.Err() != nil {
		return dst, false
	}
	return appendKey(dst, channel, symbol, interval)
}

// appendKey appends the routing key of a channel's message with symbol
// and interval (raw JSON; nil where absent).
func appendKey(dst, channel, symbol, interval []byte) ([]byte, bool) {
	dst, ok := jsonscan.AppendString(dst, channel)
	if !ok {
		return dst, false
	}
	if _, bySymbol := symbolChannels[string(dst)]; !bySymbol {
		return dst, true
	}
	isOHLC := string(dst) == "ohlc"
	dst = append(dst, ':')
	if dst, ok = jsonscan.AppendString(dst, symbol); !ok {
		return dst, false
	}
	if isOHLC {
		n, ok := jsonscan.Uint(interval)
		if !ok {
			return dst, false
		}
		dst = strconv.AppendUint(append(dst, ':'), n, 10)
	}
	return dst, true
}

// RefusedTopic implements protocol.TopicAcking: a refusal's Error is the
// whole frame, naming the symbol it refuses where it has one
// (https://docs.kraken.com/api/docs/websocket-v2/book, "Subscribe
// Response": "symbol" on failure); one that names none refuses the
// request.
func (dialect) RefusedTopic(req *protocol.Request, frame []byte) (int, bool) {
	var symbol []byte
	m := jsonscan.Object(frame, 0)
	for k, start, more := m.Next(); more; k, start, more = m.Next() {
		end := m.Skip()
		if string(k) == "symbol" {
			symbol = frame[start:end]
		}
	}
	var buf [64]byte
	s, ok := jsonscan.AppendString(buf[:0], symbol)
	if symbol == nil || !ok {
		if len(req.Topics) == 1 {
			return 0, false // a channel of no symbol goes alone
		}
		return -1, true
	}
	for i, t := range req.Topics {
		if pt, err := parseTopic(t.Name); err == nil && pt.symbol == string(s) {
			return i, false
		}
	}
	return -1, false
}

// Classify reads a frame: a method's answer (subscribe, unsubscribe,
// pong, add_order, …: req_id, success, result or error; a frame with
// success and no method is one too), a channel's
// message (channel, type, data), a heartbeat or a status.
func (dialect) Classify(frame []byte, f *protocol.Frame) error {
	f.Reset()
	// Every member is read; a repeated one counts as its last occurrence
	// (as encoding/json decodes it).
	var method, reqID, success, result, channel, typ, data, stamp []byte
	m := jsonscan.Object(frame, 0)
	for key, start, ok := m.Next(); ok; key, start, ok = m.Next() {
		end := m.Skip()
		switch string(key) {
		case "method":
			method = frame[start:end]
		case "req_id":
			reqID = frame[start:end]
		case "success":
			success = frame[start:end]
		case "result":
			result = frame[start:end]
		case "channel":
			channel = frame[start:end]
		case "type":
			typ = frame[start:end]
		case "data":
			data = frame[start:end]
		case "timestamp":
			stamp = frame[start:end] // an ohlc message's own (stamp.go)
		}
	}
	if m.Err() != nil || !jsonscan.AtEnd(frame, m.End()) {
		return protocol.ScanError(frame)
	}
	switch {
	case method != nil || success != nil:
		var buf [32]byte
		name, ok := jsonscan.String(method, buf[:0])
		if method != nil && !ok {
			return protocol.ErrUnrecognized
		}
		f.ID, f.HasID = requestID(reqID)
		if string(name) == "pong" && !f.HasID {
			f.Kind, f.Data = protocol.KindKeepalive, frame // a keepalive's answer
			return nil
		}
		f.Kind = protocol.KindResponse
		switch {
		case string(name) == "pong":
			f.Result = frame
		case string(success) == "true" && result != nil:
			f.Result = result
		case string(success) == "true":
			f.Result = frame
		default:
			f.Error = frame
		}
		return nil
	case channel != nil:
		if jsonscan.StringIs(channel, "heartbeat") || jsonscan.StringIs(channel, "status") {
			f.Kind, f.Data = protocol.KindEvent, frame
			return nil
		}
		if data == nil {
			return protocol.ErrUnrecognized
		}
		symbol, interval, itemStamp := firstItem(data)
		key, ok := appendKey(f.KeyScratch(), channel, symbol, interval)
		if !ok {
			return protocol.ErrUnrecognized
		}
		f.KeepKey(key)
		f.Kind, f.Data = protocol.KindNotification, data
		f.Snapshot = jsonscan.StringIs(typ, "snapshot")
		if f.WantTime {
			f.Time = venueTime(stamp, itemStamp)
		}
		return nil
	}
	return protocol.ErrUnrecognized
}

// requestID reads a req_id: an integer, or (as a server may echo an id
// it was sent so) a string of digits.
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

// firstItem returns the raw symbol, interval and timestamp of the first
// item of a message's data array (nil where absent).
func firstItem(data []byte) (symbol, interval, stamp []byte) {
	i := jsonscan.SkipSpace(data, 0)
	if i >= len(data) || data[i] != '[' {
		return nil, nil, nil
	}
	i = jsonscan.SkipSpace(data, i+1)
	if i >= len(data) || data[i] != '{' {
		return nil, nil, nil
	}
	m := jsonscan.Object(data, i)
	for k, start, more := m.Next(); more; k, start, more = m.Next() {
		end := m.Skip()
		switch string(k) {
		case "symbol":
			symbol = data[start:end]
		case "interval":
			interval = data[start:end]
		case "timestamp":
			stamp = data[start:end]
		}
	}
	if m.Err() != nil {
		return nil, nil, nil
	}
	return symbol, interval, stamp
}

func (dialect) HeartbeatReply(dst []byte, _ uint64) []byte { return dst }
func (dialect) Handshake() []protocol.Call                 { return nil }

// Sequence: Kraken's books carry no sequence number; their checksum is
// checked by the book's rules (book.go).
func (dialect) Sequence([]byte) (id, prev uint64, ok bool) { return 0, 0, false }

// keepalivePing is the ping the client sends, without req_id.
const keepalivePing = `{"method":"ping"}`

// pongPrefix starts the answer to a ping (the server half writes it
// first; Kraken's examples put "method" first too).
const pongPrefix = `{"method":"pong"`
