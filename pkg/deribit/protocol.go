package deribit

import (
	"fmt"
	"strconv"
	"time"

	"github.com/wsfan/wsfan/internal/jsonscan"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// dialect speaks Deribit's JSON-RPC over WebSocket:
//
//	→ {"jsonrpc":"2.0","id":3600,"method":"public/subscribe","params":{"channels":["book.BTC-PERPETUAL.100ms"]}}
//	← {"jsonrpc":"2.0","id":3600,"result":["book.BTC-PERPETUAL.100ms"]}
//	← {"jsonrpc":"2.0","method":"subscription","params":{"channel":"book.BTC-PERPETUAL.100ms","data":{...}}}
//	← {"jsonrpc":"2.0","method":"heartbeat","params":{"type":"test_request"}}
type dialect struct {
	protocol.ChannelDialect
	heartbeat time.Duration
}

// Option configures the client half of the Deribit dialect.
type Option func(*dialect)

// WithHeartbeat sets the interval the client asks Deribit to send
// heartbeats at (public/set_heartbeat) on every connection. Deribit
// requires at least 10s; 0 disables it. Default: 30s.
func WithHeartbeat(interval time.Duration) Option {
	return func(d *dialect) { d.heartbeat = interval }
}

// Protocol returns the client half of the Deribit dialect. Channels under user. are private:
// they are subscribed with private/subscribe, which needs a public/auth on
// the connection first (see client.WithOnConnect). book.* channels are
// checked for gaps (prev_change_id against the previous change_id).
func Protocol(opts ...Option) protocol.Protocol {
	d := &dialect{
		ChannelDialect: protocol.ChannelDialect{DialectName: Name, PrivatePrefixes: privatePrefixes, SequencedPrefix: "book.",
			MaxChannels: MaxChannels, MaxFrameBytes: MaxFrameBytes},
		heartbeat: 30 * time.Second,
	}
	for _, o := range opts {
		o(d)
	}
	return d
}

// MinHeartbeat is the shortest heartbeat interval Deribit accepts
// (public/set_heartbeat: "interval ... minimum 10").
const MinHeartbeat = 10 * time.Second

// check refuses a heartbeat interval Deribit would refuse (Venue.Invalid): a refused
// set_heartbeat on every connection would never let one come up.
func (d *dialect) check() error {
	if d.heartbeat > 0 && d.heartbeat < MinHeartbeat {
		return fmt.Errorf("deribit: heartbeat interval %v is below Deribit's minimum of %v (WithHeartbeat; 0 turns heartbeats off)", d.heartbeat, MinHeartbeat)
	}
	return nil
}

func (d *dialect) Handshake() []protocol.Call {
	if d.heartbeat <= 0 {
		return nil
	}
	p := []byte(`{"interval":`)
	p = strconv.AppendFloat(p, d.heartbeat.Seconds(), 'f', -1, 64)
	p = append(p, '}')
	return []protocol.Call{{Method: "public/set_heartbeat", Params: p}}
}

func (d *dialect) HeartbeatReply(dst []byte, id uint64) []byte {
	return protocol.AppendRPC(dst, id, "public/test", nil, "{}")
}

func (*dialect) Classify(frame []byte, f *protocol.Frame) error {
	err := classify(frame, f)
	if err == nil && f.WantTime && f.Kind == protocol.KindNotification {
		f.Time = venueTime(f.Data)
	}
	return err
}

// classify is Classify but for the venue's stamp.
func classify(frame []byte, f *protocol.Frame) error {
	f.Reset()
	if protocol.FastNotify(frame, `{"jsonrpc":"2.0","method":"subscription","params":{"channel":"`, `,"data":`, 2, f) {
		f.Kind = protocol.KindNotification
		return nil
	}
	var r protocol.RPCFrame
	if err := protocol.ScanRPC(frame, f, &layout, &r); err != nil || r.Method == nil {
		return err // nil for a response
	}
	switch {
	case jsonscan.StringIs(r.Method, "subscription"):
		if r.Payload == nil || !f.DecodeKey(r.Key) {
			return protocol.ErrUnrecognized
		}
		f.Kind, f.Data = protocol.KindNotification, r.Payload
	case jsonscan.StringIs(r.Method, "heartbeat"):
		f.Kind, f.Data = protocol.KindEvent, r.Aux
		if jsonscan.StringIs(r.Aux, "test_request") {
			f.Kind = protocol.KindHeartbeat
		}
	default:
		return protocol.ErrUnrecognized
	}
	return nil
}

// layout: a notification's params carry "channel" and "data"; a
// heartbeat's carry "type", kept as its payload.
var layout = protocol.RPCLayout{Key: "channel", Payload: "data", Aux: "type"}

// Sequence reads change_id and prev_change_id from a book notification.
func (*dialect) Sequence(data []byte) (id, prev uint64, ok bool) {
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

// Deribit's request limits, which every subscribe and unsubscribe (a
// restore's included) keeps to. Deribit answers a request frame that is
// too large with an error that has no id, {"jsonrpc":"2.0","error":
// {"code":-32600,"message":"request entity too large"},...}; users report
// it near 32 KiB, a few hundred channels into a subscribe, and splitting
// at 250 channels a request as the fix (its documentation states no
// number). client.WithResubscribeChunk overrides MaxChannels; the frame
// cap always holds.
const (
	MaxChannels   = 250
	MaxFrameBytes = 30 << 10
)

// privatePrefixes are the prefixes of Deribit's private channels, which
// need an authenticated connection: both halves read them.
var privatePrefixes = []string{"user."}

// Deribit's refusals for the pace of requests, from its RPC error table
// (docs.deribit.com, "RPC Error Codes") and its "Rate Limits" article
// (docs.deribit.com/articles/rate-limits).
const (
	// codeThrottled, 10028 too_many_requests: "Allowed request rate has
	// been exceeded". Deribit sends it when a request finds no credits
	// left "and terminate[s] the session"; a new connection is to wait
	// for the credits to refill.
	codeThrottled = 10028
	// codeTooManyConcurrent, 10066 too_many_concurrent_requests: "The
	// client has sent too many public requests that have not yet been
	// executed". A refusal for the pace of requests too; the table does
	// not say that it ends the session.
	codeTooManyConcurrent = 10066
)

// ThrottleRefill is how long the client waits after a 10028 ended the
// session before it connects again: the time Deribit's default pool for
// requests outside the matching engine takes to refill from empty, 50,000
// credits at 10,000 a second (the "Rate Limits" article's default
// settings, as published before its 2025 rewrite; the current text gives
// no number, saying only to wait for the credits to replenish). The
// subscription pool (SubscribeLimit) refills sooner, in 3 s.
const ThrottleRefill = 5 * time.Second

// ClassifyError tells Deribit's refusals for the pace of requests, not
// for what they ask (the client sends them again later), and that after
// a 10028 the server has ended the session: the client reconnects no
// sooner than ThrottleRefill.
func (rules) ClassifyError(code int, _ string) protocol.ErrorClass {
	return protocol.ErrorClass{
		Throttled:   code == codeThrottled || code == codeTooManyConcurrent,
		EndsSession: code == codeThrottled,
		Refill:      ThrottleRefill,
	}
}
