package protocol

import (
	"bytes"

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
	m := jsonscan.Object(frame, 0)
	for {
		key, start, ok := m.Next()
		if !ok {
			break
		}
		switch string(key) {
		case "channel_name":
			end := m.Skip()
			s, ok := jsonscan.Unquote(frame[start:end])
			if !ok {
				return ErrUnrecognized
			}
			f.Key = s
		case "notification":
			end, ok := jsonscan.TailValue(frame, start, 1)
			if !ok {
				end = m.Skip()
			}
			f.Data = frame[start:end]
			if ok && f.Key != nil {
				return thalexNotification(f)
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
	if f.Key != nil && f.Data != nil {
		return thalexNotification(f)
	}
	if f.Kind == KindResponse && f.HasID {
		return nil
	}
	if f.Kind == KindResponse {
		return nil // an error without a usable id: the caller counts it
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
	if bytes.Contains(f.Data, []byte(`"reconnect"`)) {
		f.Event = EventReconnect
	}
	return nil
}
