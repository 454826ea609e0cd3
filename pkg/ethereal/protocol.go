package ethereal

import (
	"fmt"
	"strings"

	"github.com/wsfan/wsfan/internal/jsonscan"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// dialect speaks Ethereal's subscription stream:
//
//	→ {"event":"subscribe","data":{"type":"L2Book","symbol":"BTCUSD"}}
//	← {"e":"L2Book","t":1737043200123,"data":{"s":"BTCUSD","t":...,"pt":...,"a":[...],"b":[...]}}
//
// A topic is "TYPE:SYMBOL" or "TYPE:SUBACCOUNT_ID": a notification of a
// subaccount stream is routed by data.subaccountId, any other by data.s
// (data.symbol when there is no s). There are no request ids,
// acknowledgements or batches: subscribes are individual frames written
// in one flush, and a notification's Data is the whole frame, which is
// therefore checked to be one complete JSON value.
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

// Subscribe shares every topic's cached frame; nothing is copied.
func (dialect) Subscribe(b *protocol.Batch, topics []*protocol.Topic, _ func() uint64, _ int) {
	for _, t := range topics {
		b.Messages = append(b.Messages, t.Sub)
	}
	b.Requests = append(b.Requests, protocol.Request{Topics: topics})
}

func (dialect) Unsubscribe(b *protocol.Batch, topics []*protocol.Topic, _ []string, _ func() uint64, _ int) {
	for _, t := range topics {
		b.Messages = append(b.Messages, t.Unsub)
	}
}

// Ack is never needed: Ethereal acknowledges nothing.
func (dialect) Ack(req *protocol.Request, _ []byte, keys []string) error {
	for i, t := range req.Topics {
		keys[i] = t.Key
	}
	return nil
}

func (dialect) Classify(frame []byte, f *protocol.Frame) error {
	f.Reset()
	// One pass reads and checks the whole frame, which is the payload:
	// a truncated book must not reach a consumer as a message. A repeated
	// member counts as its last occurrence (as encoding/json decodes it).
	var typ []byte
	var ids streamIDs
	m := jsonscan.Object(frame, 0)
	for key, start, ok := m.Next(); ok; key, start, ok = m.Next() {
		switch string(key) {
		case "e":
			typ = frame[start:m.Skip()]
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

// Sequence reads data.t and data.pt of an L2Book frame.
func (dialect) Sequence(frame []byte) (id, prev uint64, ok bool) {
	m := jsonscan.Object(frame, 0)
	for {
		key, start, more := m.Next()
		if !more {
			return 0, 0, false
		}
		if string(key) != "data" {
			m.Skip()
			continue
		}
		var haveID, havePrev bool
		d := jsonscan.Object(frame, start)
		for !(haveID && havePrev) {
			k, vs, more := d.Next()
			if !more {
				break
			}
			end := d.Skip()
			switch string(k) {
			case "t":
				id, haveID = jsonscan.Uint(frame[vs:end])
			case "pt":
				prev, havePrev = jsonscan.Uint(frame[vs:end])
			}
		}
		return id, prev, haveID
	}
}
