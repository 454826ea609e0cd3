package protocol

import (
	"fmt"
	"strings"

	"github.com/wsfan/wsfan/internal/jsonscan"
)

// ethereal speaks Ethereal's subscription stream:
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
type ethereal struct{}

// Ethereal returns the Ethereal dialect. L2Book topics are checked for
// gaps (pt against the previous t).
func Ethereal() Protocol { return ethereal{} }

// etherealSubaccountTypes are the stream types keyed by subaccount.
var etherealSubaccountTypes = map[string]bool{
	"OrderFill": true, "OrderUpdate": true, "SubaccountLiquidation": true,
	"TokenTransfer": true, "Position": true,
}

func (ethereal) Name() string { return "ethereal" }

func (ethereal) NewTopic(name string) (*Topic, error) {
	typ, id, ok := strings.Cut(name, ":")
	if !ok || typ == "" || id == "" || strings.ContainsAny(name, "\"\\") {
		return nil, fmt.Errorf("%w: ethereal topic %q, want TYPE:SYMBOL or TYPE:SUBACCOUNT_ID", ErrInvalidTopic, name)
	}
	field := "symbol"
	if etherealSubaccountTypes[typ] {
		field = "subaccountId"
	}
	enc := func(event string) []byte {
		b := []byte(`{"event":"` + event + `","data":{"type":`)
		b = AppendJSONString(b, typ)
		b = append(b, `,"`+field+`":`...)
		b = AppendJSONString(b, id)
		return append(b, "}}"...)
	}
	return &Topic{Name: name, Key: name, Sequenced: typ == "L2Book", sub: enc("subscribe"), unsub: enc("unsubscribe")}, nil
}

func (ethereal) AppendRequest([]byte, uint64, string, []byte) ([]byte, error) {
	return nil, ErrUnsupported
}

// Subscribe shares every topic's cached frame; nothing is copied.
func (ethereal) Subscribe(b *Batch, topics []*Topic, _ func() uint64, _ int) {
	for _, t := range topics {
		b.Messages = append(b.Messages, t.sub)
	}
	b.Requests = append(b.Requests, Request{Topics: topics})
}

func (ethereal) Unsubscribe(b *Batch, topics []*Topic, _ []string, _ func() uint64, _ int) {
	for _, t := range topics {
		b.Messages = append(b.Messages, t.unsub)
	}
}

// Ack is never needed: Ethereal acknowledges nothing.
func (ethereal) Ack(req *Request, _ []byte, keys []string) error {
	for i, t := range req.Topics {
		keys[i] = t.Key
	}
	return nil
}

func (ethereal) Classify(frame []byte, f *Frame) error {
	f.reset()
	// One pass reads and checks the whole frame, which is the payload:
	// a truncated book must not reach a consumer as a message. A repeated
	// member counts as its last occurrence (as encoding/json decodes it).
	var typ []byte
	var ids etherealIDs
	m := jsonscan.Object(frame, 0)
	for key, start, ok := m.Next(); ok; key, start, ok = m.Next() {
		switch string(key) {
		case "e":
			typ = frame[start:m.Skip()]
		case "data":
			ids = etherealIDs{}
			if frame[start] != '{' {
				m.Skip()
				continue
			}
			end, err := ids.scan(frame, start)
			if err != nil {
				return ErrMalformed
			}
			m.SkipTo(end)
		default:
			m.Skip()
		}
	}
	if m.Err() != nil || !jsonscan.AtEnd(frame, m.End()) {
		return scanErr(frame)
	}
	key, ok := jsonscan.AppendString(f.keyScratch(), typ)
	if !ok || !ids.object {
		return ErrUnrecognized
	}
	id := ids.symbol
	if etherealSubaccountTypes[string(key)] {
		id = ids.subaccount
	}
	if key, ok = jsonscan.AppendString(append(key, ':'), id); !ok {
		return ErrUnrecognized
	}
	f.keepKey(key)
	f.Data = frame
	f.Kind = KindNotification
	return nil
}

// etherealIDs are the members of a data object that name its stream:
// each a whole value, nil when absent.
type etherealIDs struct {
	object     bool   // data is an object
	symbol     []byte // "s", or "symbol" when there is no "s"
	subaccount []byte // "subaccountId"
}

// scan reads the data object at frame[start] and returns its end.
func (ids *etherealIDs) scan(frame []byte, start int) (int, error) {
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

func (ethereal) HeartbeatReply(dst []byte, _ uint64) []byte { return dst }
func (ethereal) Handshake() []Call                          { return nil }

// Sequence reads data.t and data.pt of an L2Book frame.
func (ethereal) Sequence(frame []byte) (id, prev uint64, ok bool) {
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
