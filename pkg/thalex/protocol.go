package thalex

import (
	"github.com/wsfan/wsfan/internal/jsonscan"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// dialect speaks Thalex's WebSocket API:
//
//	→ {"jsonrpc":"2.0","id":2,"method":"public/subscribe","params":{"channels":["ticker.BTC-PERPETUAL.raw"]}}
//	← {"id":2,"result":["ticker.BTC-PERPETUAL.raw"]}
//	← {"channel_name":"ticker.BTC-PERPETUAL.raw","notification":{...}}
//	← {"channel_name":"system","notification":{"event":"reconnect"}}
type dialect struct {
	protocol.ChannelDialect
	notices bool // subscribe the system channel on every connection
}

// Option configures the client half of the Thalex dialect.
type Option func(*dialect)

// WithNotices subscribes the system channel on every connection (one
// public/subscribe before the restore), so that Thalex's "reconnect soon"
// notice arrives and the client reconnects early instead of being cut
// off: the notice comes only to a connection subscribed to system.
// Default: true.
func WithNotices(on bool) Option { return func(d *dialect) { d.notices = on } }

// Protocol returns the client half of the Thalex dialect. The private
// channels (see privatePrefixes) are subscribed with private/subscribe,
// which needs a public/login on the connection first (Login, with
// client.WithOnConnect).
func Protocol(opts ...Option) protocol.Protocol {
	d := &dialect{
		ChannelDialect: protocol.ChannelDialect{DialectName: Name, PrivatePrefixes: privatePrefixes, UnsubscribeMethod: unsubscribeMethod},
		notices:        true,
	}
	for _, o := range opts {
		o(d)
	}
	return d
}

// systemChannel carries Thalex's notices, such as
// {"channel_name":"system","notification":{"event":"reconnect"}}.
const systemChannel = "system"

// Handshake subscribes the system channel when notices are wanted.
func (d *dialect) Handshake() []protocol.Call {
	if !d.notices {
		return nil
	}
	return []protocol.Call{{Method: "public/subscribe", Params: []byte(`{"channels":["` + systemChannel + `"]}`)}}
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
	if protocol.FastNotify(frame, `{"channel_name":"`, `,"notification":`, 1, f) {
		return notification(f)
	}
	// Every member is read; a repeated one counts once, as its last
	// occurrence (as encoding/json decodes it).
	var channel, note, snapshot []byte
	m := jsonscan.Object(frame, 0)
	for key, start, ok := m.Next(); ok; key, start, ok = m.Next() {
		switch string(key) {
		case "channel_name":
			channel = frame[start:m.Skip()]
		case "notification":
			note = frame[start:m.SkipTail(1)]
		case "snapshot":
			snapshot = frame[start:m.Skip()]
		default:
			if !protocol.ClassifyResponseMember(&m, frame, key, start, f) {
				m.Skip()
			}
		}
	}
	if m.Err() != nil || !jsonscan.AtEnd(frame, m.End()) {
		return protocol.ScanError(frame)
	}
	if note != nil && f.DecodeKey(channel) {
		f.ClearResponse()
		f.Data = note
		f.Snapshot = string(snapshot) == "true"
		return notification(f)
	}
	f.Key = nil
	if f.Kind == protocol.KindResponse {
		return nil // with or without a usable id: the caller counts the latter
	}
	return protocol.ErrUnrecognized
}

// notification turns a channel frame into a notification, or into
// an event when it comes on the system channel.
func notification(f *protocol.Frame) error {
	if string(f.Key) != systemChannel {
		f.Kind = protocol.KindNotification
		return nil
	}
	f.Kind = protocol.KindEvent
	if reconnectEvent(f.Data) {
		f.Event = protocol.EventReconnect
	}
	return nil
}

// reconnectEvent reports whether a system notification is an object
// whose "event" is "reconnect".
func reconnectEvent(data []byte) bool {
	var event []byte
	m := jsonscan.Object(data, 0)
	for key, start, ok := m.Next(); ok; key, start, ok = m.Next() {
		end := m.Skip()
		if string(key) == "event" {
			event = data[start:end]
		}
	}
	return m.Err() == nil && jsonscan.StringIs(event, "reconnect")
}

// privatePrefixes are the prefixes of Thalex's private channels, which
// need an authenticated connection: both halves read them. They are the
// API specification's "Private subscriptions" (accounting: account.* and
// session.orders; conditional orders; bots; notifications:
// user.inbox_notifications; MM protection: session.mm_protection; MM
// RFQs: mm.rfqs, mm.rfq_quotes).
var privatePrefixes = []string{"account.", "session.", "mm.", "user.inbox_notifications"}

// unsubscribeMethod is Thalex's one unsubscribe method, for public and
// private channels mixed (the API specification's rpc_unsubscribe; there
// is no public/unsubscribe or private/unsubscribe).
const unsubscribeMethod = "unsubscribe"

// The error codes that refuse a request for the pace of requests. Thalex's
// API specification gives the error object ({"code":N,"message":S}) but no
// table of codes, so both numbers come from SDKs, not from Thalex's docs:
const (
	// codeThrottled, 4: a request over the rate limit. Thalex's own
	// Python SDK, thalex_py, names it ERROR_CODE_THROTTLE = 4
	// (examples/roll_quoter.py); the test servers answer it.
	codeThrottled = 4
	// codeTooManyPending, 3: too many requests awaiting an answer. Only a
	// third-party SDK names it (TmsKtel/thalex_rust_sdk,
	// src/manual_models/error_code.rs: 3 TooManyPendingRequests beside
	// 4 ThrottleExceeded); thalex_py has no constant for it. It is taken
	// as throttling because waiting and sending again is the remedy for
	// both, while taking it as a refusal would drop the topics for good.
	codeTooManyPending = 3
)

// ClassifyError tells a request refused for the pace of requests, not
// for what it asks: the client sends it again later.
func (rules) ClassifyError(code int, _ string) protocol.ErrorClass {
	return protocol.ErrorClass{Throttled: code == codeThrottled || code == codeTooManyPending}
}
