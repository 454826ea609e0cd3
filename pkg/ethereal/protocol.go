package ethereal

import (
	"fmt"
	"strings"
	"time"

	"github.com/wsfan/wsfan/internal/jsonscan"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// dialect speaks Ethereal's subscription stream:
//
//	→ {"event":"subscribe","data":{"type":"L2Book","symbol":"BTCUSD"}}
//	← {"ok":true}
//	← {"e":"L2Book","t":1737043200123,"data":{"s":"BTCUSD","t":...,"pt":...,"a":[...],"b":[...]}}
//
// A topic is "TYPE:SYMBOL" or "TYPE:SUBACCOUNT_ID": a notification of a
// subaccount stream is routed by the subaccount id it carries (see
// streamIDs), any other by data.s (data.symbol when there is no s). The
// service answers events with status frames, {"ok":bool,"code":CODE},
// which carry no id: each subscribe and unsubscribe is one request, and a
// status answers the oldest request still waiting (the client's rule for
// answers without an id: a connection's events are answered in order).
// Since the public material does not say whether a success is answered,
// a request nobody answered within AcceptAfter is taken as accepted
// until a connection shows it answers successes (see AcceptAfter). There
// are no batches: subscribes are individual frames written in one flush,
// and a notification's Data is the whole frame, which is therefore
// checked to be one complete JSON value.
type dialect struct{}

// Protocol returns the client half of the Ethereal dialect. L2Book topics are checked for
// gaps (pt against the previous t).
func Protocol() protocol.Protocol { return dialect{} }

// subaccountTypes are the account streams, keyed by subaccount: their
// events route by the subaccount id they carry (see streamIDs).
var subaccountTypes = map[string]bool{
	"OrderFill": true, "OrderUpdate": true, "PositionUpdate": true,
	"SubaccountLiquidation": true, "TokenTransfer": true,
}

func (dialect) Name() string { return Name }

func (dialect) NewTopic(name string) (*protocol.Topic, error) {
	typ, id, ok := strings.Cut(name, ":")
	if !ok || typ == "" || id == "" || strings.ContainsAny(name, "\"\\") {
		return nil, fmt.Errorf("%w: ethereal topic %q, want TYPE:SYMBOL or TYPE:SUBACCOUNT_ID", protocol.ErrInvalidTopic, name)
	}
	field := "symbol"
	if subaccountTypes[typ] {
		field = "subaccountId"
	}
	enc := func(event string) []byte {
		b := []byte(`{"event":"` + event + `","data":{"type":`)
		b = protocol.AppendJSONString(b, typ)
		b = append(b, `,"`+field+`":`...)
		b = protocol.AppendJSONString(b, id)
		return append(b, "}}"...)
	}
	l2 := typ == "L2Book"
	return &protocol.Topic{Name: name, Key: name, Sequenced: l2, SnapshotFirst: l2, Sub: enc("subscribe"), Unsub: enc("unsubscribe")}, nil
}

func (dialect) AppendRequest([]byte, uint64, string, []byte) ([]byte, error) {
	return nil, protocol.ErrUnsupported
}

// Subscribe shares every topic's cached frame; nothing is copied. Each
// frame is one request, answered by a status frame without an id; the
// ids handed out order the requests (the client answers the oldest).
func (dialect) Subscribe(b *protocol.Batch, topics []*protocol.Topic, nextID func() uint64, _ int) {
	for i, t := range topics {
		b.Requests = append(b.Requests, protocol.Request{ID: nextID(), Topics: topics[i : i+1 : i+1], Message: len(b.Messages)})
		b.Messages = append(b.Messages, t.Sub)
	}
}

// Unsubscribe is one request a topic too: its status answer must not be
// taken for a subscribe's.
func (dialect) Unsubscribe(b *protocol.Batch, topics []*protocol.Topic, _ []string, nextID func() uint64, _ int) {
	for i, t := range topics {
		b.Requests = append(b.Requests, protocol.Request{ID: nextID(), Topics: topics[i : i+1 : i+1], Message: len(b.Messages)})
		b.Messages = append(b.Messages, t.Unsub)
	}
}

// Ack accepts the request's topic under its own name: an {"ok":true}
// carries nothing else (a refusal never gets here, it is an error).
func (dialect) Ack(req *protocol.Request, _ []byte, keys []string) error {
	for i, t := range req.Topics {
		keys[i] = t.Key
	}
	return nil
}

// acceptAfter (Venue.AcceptAfter) is how long a subscribe or unsubscribe may go unanswered
// before it is taken as accepted, while the connection has not answered
// a success yet. Ethereal's WebSocket page shows the status frame of a
// refusal, {ok: false, code: "SUBSCRIPTION_LIMIT_EXCEEDED"}
// (https://docs.ethereal.trade/developer-guides/trading-api/websockets),
// but does not say whether a success is answered. A connection that
// answers one success is waited for from then on. It is long enough for a status frame to
// cross a slow link, short enough that a Subscribe to a quiet private
// stream of a service that answers only refusals does not stall.
const acceptAfter = 2 * time.Second

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
	// One pass reads and checks the whole frame, which is the payload:
	// a truncated book must not reach a consumer as a message. A repeated
	// member counts as its last occurrence (as encoding/json decodes it).
	var typ, status []byte
	var ids streamIDs
	m := jsonscan.Object(frame, 0)
	for key, start, ok := m.Next(); ok; key, start, ok = m.Next() {
		switch string(key) {
		case "e":
			typ = frame[start:m.Skip()]
		case "ok":
			status = frame[start:m.Skip()]
		case "data":
			ids = streamIDs{}
			if frame[start] != '{' {
				m.Skip()
				continue
			}
			end, err := ids.scan(frame, start)
			if err != nil {
				return protocol.ErrMalformed
			}
			m.SkipTo(end)
		default:
			m.Skip()
		}
	}
	if m.Err() != nil || !jsonscan.AtEnd(frame, m.End()) {
		return protocol.ScanError(frame)
	}
	if typ == nil && status != nil {
		return classifyStatus(frame, status, f)
	}
	key, ok := jsonscan.AppendString(f.KeyScratch(), typ)
	if !ok || !ids.object {
		return protocol.ErrUnrecognized
	}
	id := ids.symbol
	if subaccountTypes[string(key)] {
		id = ids.account()
	}
	if key, ok = jsonscan.AppendString(append(key, ':'), id); !ok {
		return protocol.ErrUnrecognized
	}
	f.KeepKey(key)
	f.Data = frame
	f.Kind = protocol.KindNotification
	return nil
}

// classifyStatus reads a status frame, the service's answer to an event:
// {"ok":true}, or {"ok":false,"code":"SUBSCRIPTION_LIMIT_EXCEEDED"}. It
// carries no id: the client takes it as the answer to the oldest request
// waiting. A refusal's Error is the whole frame, whose code the client
// reports.
func classifyStatus(frame, ok []byte, f *protocol.Frame) error {
	f.Kind = protocol.KindResponse
	switch string(ok) {
	case "true":
		f.Result = ok
	case "false":
		f.Error = frame
	default:
		return protocol.ErrUnrecognized
	}
	return nil
}

// streamIDs are the members of a data object that name its stream:
// each a whole value, nil when absent.
type streamIDs struct {
	object     bool   // data is an object
	symbol     []byte // "s", or "symbol" when there is no "s"
	sid        []byte // "sid": an account event's subaccount id
	items      []byte // "d": the items of an account event
	subaccount []byte // "subaccountId"
}

// account is the subaccount id an account event routes by: data.sid, or
// the sid of data.d's first item, or data.subaccountId (the SDK's
// schemas put it in one of the first two).
func (ids *streamIDs) account() []byte {
	if ids.sid != nil {
		return ids.sid
	}
	if len(ids.items) > 0 && ids.items[0] == '[' {
		var sid []byte
		_ = jsonscan.Elements(ids.items, 0, func(e []byte) bool {
			m := jsonscan.Object(e, 0)
			for key, start, ok := m.Next(); ok; key, start, ok = m.Next() {
				end := m.Skip()
				if string(key) == "sid" {
					sid = e[start:end]
				}
			}
			return false // the first item names it
		})
		if sid != nil {
			return sid
		}
	}
	return ids.subaccount
}

// scan reads the data object at frame[start] and returns its end.
func (ids *streamIDs) scan(frame []byte, start int) (int, error) {
	var s, symbol []byte
	d := jsonscan.Object(frame, start)
	for key, vstart, ok := d.Next(); ok; key, vstart, ok = d.Next() {
		end := d.Skip()
		switch string(key) {
		case "s":
			s = frame[vstart:end]
		case "symbol":
			symbol = frame[vstart:end]
		case "subaccountId":
			ids.subaccount = frame[vstart:end]
		case "sid":
			ids.sid = frame[vstart:end]
		case "d":
			ids.items = frame[vstart:end]
		}
	}
	if d.Err() != nil {
		return 0, d.Err()
	}
	ids.object, ids.symbol = true, s
	if s == nil {
		ids.symbol = symbol
	}
	return d.End(), nil
}

func (dialect) HeartbeatReply(dst []byte, _ uint64) []byte { return dst }
func (dialect) Handshake() []protocol.Call                 { return nil }

// Sequence reads data.t and data.pt of an L2Book frame. pt is optional
// (https://docs.ethereal.trade/developer-guides/trading-api/websockets,
// L2Book: the first message after a subscribe is the whole book, up to
// 100 levels a side, every later one a diff with absolute quantities;
// "using both the pt and data.t you can infer whether or not any events
// were missed"). A message with pt is checked against the last t: pt 0
// names no previous message (the whole book a fan-out server replays,
// book.Rules.AppendSnapshot), any other pt that is not the last t is a
// gap. A message without pt is protocol.Unchained: the client takes it
// for the whole book only as the first after a subscribe, else for a
// change it cannot check.
func (dialect) Sequence(frame []byte) (id, prev uint64, ok bool) {
	t, pt, found := times(frame)
	if !found {
		return 0, 0, false
	}
	id, ok = jsonscan.Uint(t)
	prev, havePrev := jsonscan.Uint(pt)
	if pt == nil || !havePrev {
		prev = protocol.Unchained
	}
	return id, prev, ok
}

// times returns the raw t and pt of an event's data (nil where absent;
// found is false without a data object). The levels after them are not
// read.
func times(frame []byte) (t, pt []byte, found bool) {
	m := jsonscan.Object(frame, 0)
	for {
		key, start, more := m.Next()
		if !more {
			return nil, nil, false
		}
		if string(key) != "data" {
			m.Skip()
			continue
		}
		d := jsonscan.Object(frame, start)
		for t == nil || pt == nil {
			k, vs, more := d.Next()
			if !more {
				break
			}
			end := d.Skip()
			switch string(k) {
			case "t":
				t = frame[vs:end]
			case "pt":
				pt = frame[vs:end]
			}
		}
		return t, pt, true
	}
}
