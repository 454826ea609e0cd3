package protocol

import (
	"github.com/wsfan/wsfan/internal/jsonscan"
)

// thalex speaks Thalex's WebSocket API:
//
//	→ {"jsonrpc":"2.0","id":2,"method":"public/subscribe","params":{"channels":["ticker.BTC-PERPETUAL.raw"]}}
//	← {"id":2,"result":["ticker.BTC-PERPETUAL.raw"]}
//	← {"channel_name":"ticker.BTC-PERPETUAL.raw","notification":{...}}
//	← {"channel_name":"system","notification":{"event":"reconnect"}}
type thalex struct{ channelDialect }

// Thalex returns the Thalex dialect. Channels under account. and session.
// are private: they are subscribed with private/subscribe, which needs a
// public/login on the connection first (see client.WithOnConnect).
func Thalex() Protocol {
	return &thalex{channelDialect{name: "thalex", privatePrefixes: thalexPrivate}}
}

const thalexSystemChannel = "system"

func (*thalex) Classify(frame []byte, f *Frame) error {
	f.reset()
	if fastNotify(frame, `{"channel_name":"`, `,"notification":`, 1, f) {
		return thalexNotification(f)
	}
	// Every member is read; a repeated one counts once, as its last
	// occurrence (as encoding/json decodes it).
	var channel, note []byte
	m := jsonscan.Object(frame, 0)
	for key, start, ok := m.Next(); ok; key, start, ok = m.Next() {
		switch string(key) {
		case "channel_name":
			channel = frame[start:m.Skip()]
		case "notification":
			note = frame[start:m.SkipTail(1)]
		default:
			if !classifyResponseMember(&m, frame, key, start, f) {
				m.Skip()
			}
		}
	}
	if m.Err() != nil || !jsonscan.AtEnd(frame, m.End()) {
		return scanErr(frame)
	}
	if note != nil && f.decodeKey(channel) {
		f.clearResponse()
		f.Data = note
		return thalexNotification(f)
	}
	f.Key = nil
	if f.Kind == KindResponse {
		return nil // with or without a usable id: the caller counts the latter
	}
	return ErrUnrecognized
}

// thalexNotification turns a channel frame into a notification, or into
// an event when it comes on the system channel.
func thalexNotification(f *Frame) error {
	if string(f.Key) != thalexSystemChannel {
		f.Kind = KindNotification
		return nil
	}
	f.Kind = KindEvent
	if thalexReconnect(f.Data) {
		f.Event = EventReconnect
	}
	return nil
}

// thalexReconnect reports whether a system notification is an object
// whose "event" is "reconnect".
func thalexReconnect(data []byte) bool {
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
