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
		channelDialect: channelDialect{name: "deribit", privatePrefixes: []string{"user."}, sequencedPrefix: "book."},
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
	var method []byte
	m := jsonscan.Object(frame, 0)
	for {
		key, start, ok := m.Next()
		if !ok {
			break
		}
		switch string(key) {
		case "method":
			end := m.Skip()
			method, _ = jsonscan.Unquote(frame[start:end])
		case "params":
			end, done, err := deribitParams(frame, start, f)
			if err != nil {
				return err
			}
			if done {
				return deribitKind(method, f)
			}
			m.SkipTo(end)
		default:
			handled, err := classifyResponseMember(&m, frame, key, start, f)
			if err != nil {
				return ErrMalformed
			}
			if !handled {
				m.Skip()
			}
		}
	}
	if m.Err() != nil {
		return ErrMalformed
	}
	if method != nil {
		return deribitKind(method, f)
	}
	if f.Kind == KindResponse {
		return nil
	}
	return ErrUnrecognized
}

// deribitParams scans a notification's params object for the channel and
// its data (or a heartbeat's type, kept in f.Data). done is true when data
// was sliced from the frame's tail, so nothing is left to scan.
func deribitParams(frame []byte, start int, f *Frame) (end int, done bool, err error) {
	p := jsonscan.Object(frame, start)
	for {
		key, vstart, ok := p.Next()
		if !ok {
			break
		}
		switch string(key) {
		case "channel":
			e := p.Skip()
			s, ok := jsonscan.Unquote(frame[vstart:e])
			if !ok {
				return 0, false, ErrUnrecognized
			}
			f.Key = s
		case "data", "type":
			e, tail := jsonscan.TailValue(frame, vstart, 2)
			if !tail {
				e = p.Skip()
			}
			f.Data = frame[vstart:e]
			if tail && f.Key != nil {
				return e, true, nil
			}
			p.SkipTo(e)
		default:
			p.Skip()
		}
	}
	if p.Err() != nil {
		return 0, false, ErrMalformed
	}
	end, err = jsonscan.SkipValue(frame, start)
	if err != nil {
		return 0, false, ErrMalformed
	}
	return end, false, nil
}

func deribitKind(method []byte, f *Frame) error {
	switch string(method) {
	case "subscription":
		if f.Key == nil || f.Data == nil {
			return ErrUnrecognized
		}
		f.Kind = KindNotification
	case "heartbeat":
		f.Kind = KindEvent
		if string(f.Data) == `"test_request"` {
			f.Kind = KindHeartbeat
		}
	default:
		return ErrUnrecognized
	}
	return nil
}

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
