package protocol

import (
	"strconv"
	"time"

	"github.com/wsfan/wsfan/internal/jsonscan"
)

// deribit speaks Deribit's JSON-RPC over WebSocket:
//
//	→ {"jsonrpc":"2.0","id":3600,"method":"public/subscribe","params":{"channels":["book.BTC-PERPETUAL.100ms"]}}
//	← {"jsonrpc":"2.0","id":3600,"result":["book.BTC-PERPETUAL.100ms"]}
//	← {"jsonrpc":"2.0","method":"subscription","params":{"channel":"book.BTC-PERPETUAL.100ms","data":{...}}}
//	← {"jsonrpc":"2.0","method":"heartbeat","params":{"type":"test_request"}}
type deribit struct {
	channelDialect
	heartbeat time.Duration
}

// DeribitOption configures the Deribit dialect.
type DeribitOption func(*deribit)

// WithHeartbeat sets the interval the client asks Deribit to send
// heartbeats at (public/set_heartbeat) on every connection. Deribit
// requires at least 10s; 0 disables it. Default: 30s.
func WithHeartbeat(interval time.Duration) DeribitOption {
	return func(d *deribit) { d.heartbeat = interval }
}

// Deribit returns the Deribit dialect. Channels under user. are private:
// they are subscribed with private/subscribe, which needs a public/auth on
// the connection first (see client.WithOnConnect). book.* channels are
// checked for gaps (prev_change_id against the previous change_id).
func Deribit(opts ...DeribitOption) Protocol {
	d := &deribit{
		channelDialect: channelDialect{name: "deribit", privatePrefixes: deribitPrivate, sequencedPrefix: "book."},
		heartbeat:      30 * time.Second,
	}
	for _, o := range opts {
		o(d)
	}
	return d
}

func (d *deribit) Handshake() []Call {
	if d.heartbeat <= 0 {
		return nil
	}
	p := []byte(`{"interval":`)
	p = strconv.AppendFloat(p, d.heartbeat.Seconds(), 'f', -1, 64)
	p = append(p, '}')
	return []Call{{Method: "public/set_heartbeat", Params: p}}
}

func (d *deribit) HeartbeatReply(dst []byte, id uint64) []byte {
	return appendRPC(dst, id, "public/test", nil, "{}")
}

func (*deribit) Classify(frame []byte, f *Frame) error {
	f.reset()
	if fastNotify(frame, `{"jsonrpc":"2.0","method":"subscription","params":{"channel":"`, `,"data":`, 2, f) {
		f.Kind = KindNotification
		return nil
	}
	var r rpcFrame
	if err := scanRPC(frame, f, &deribitLayout, &r); err != nil || r.method == nil {
		return err // nil for a response
	}
	switch {
	case jsonscan.StringIs(r.method, "subscription"):
		if r.payload == nil || !f.decodeKey(r.key) {
			return ErrUnrecognized
		}
		f.Kind, f.Data = KindNotification, r.payload
	case jsonscan.StringIs(r.method, "heartbeat"):
		f.Kind, f.Data = KindEvent, r.aux
		if jsonscan.StringIs(r.aux, "test_request") {
			f.Kind = KindHeartbeat
		}
	default:
		return ErrUnrecognized
	}
	return nil
}

// deribitLayout: a notification's params carry "channel" and "data"; a
// heartbeat's carry "type", kept as its payload.
var deribitLayout = rpcLayout{key: "channel", payload: "data", aux: "type"}

// Sequence reads change_id and prev_change_id from a book notification.
func (*deribit) Sequence(data []byte) (id, prev uint64, ok bool) {
	var haveID, havePrev bool
	m := jsonscan.Object(data, 0)
	for !(haveID && havePrev) {
		key, start, more := m.Next()
		if !more {
			break
		}
		end := m.Skip()
		switch string(key) {
		case "change_id":
			id, haveID = jsonscan.Uint(data[start:end])
		case "prev_change_id":
			prev, havePrev = jsonscan.Uint(data[start:end])
		}
	}
	return id, prev, haveID
}
