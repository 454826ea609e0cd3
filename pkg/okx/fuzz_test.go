package okx_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/wsfan/wsfan/pkg/okx"
	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/protocol/protocoltest"
)

// FuzzClassify: OKX's classifier never panics and slices only the frame
// (protocoltest.FuzzClassify), seeded with the documented frames.
func FuzzClassify(f *testing.F) { protocoltest.FuzzClassify(f, okx.Protocol(), documented(f)...) }

// FuzzRoute checks OKX's scanner against encoding/json on the same frame
// (protocoltest.FuzzRoute), with oracle as what a full parse implies.
func FuzzRoute(f *testing.F) { protocoltest.FuzzRoute(f, okx.Protocol(), oracle, documented(f)...) }

// documented returns the frames of testdata/documented.txt.
func documented(tb testing.TB) [][]byte {
	raw, err := os.ReadFile("testdata/documented.txt")
	if err != nil {
		tb.Fatal(err)
	}
	var frames [][]byte
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(line, "<-- ") || strings.HasPrefix(line, "--> ") {
			_, rest, _ := strings.Cut(line[4:], " ")
			frames = append(frames, []byte(rest))
		}
	}
	return frames
}

// routeFields (the oracle's own copy) are the argument fields a push is
// routed by, the first non-empty string winning.
var routeFields = []string{"instId", "instFamily", "instType", "ccy"}

// routeKey is the key of an argument object: its channel, and the first
// routing field with a value; a routing field met before it whose value
// is not a string makes the argument unreadable.
func routeKey(raw json.RawMessage) (string, bool) {
	a, ok := protocoltest.Members(raw)
	if !ok {
		return "", false
	}
	channel, ok := protocoltest.String(a["channel"])
	if !ok {
		return "", false
	}
	for i, rf := range routeFields {
		v, has := a[rf]
		if !has {
			continue
		}
		s, ok := protocoltest.String(v)
		if !ok {
			return "", false
		}
		if s == "" {
			continue
		}
		if i == 0 {
			return channel + ":" + s, true
		}
		return channel + ":" + rf + "=" + s, true
	}
	return channel, true
}

// id reads a request id: a string of digits, or a number.
func id(raw json.RawMessage) (uint64, bool) {
	if s, ok := protocoltest.String(raw); ok {
		raw = json.RawMessage(s)
	}
	return protocoltest.Uint(raw)
}

// oracle: an event frame is an acknowledgement (subscribe, unsubscribe:
// its result the arg), a refusal or a login (the whole frame), or an
// event (notice: 64008 a reconnect; the connection counts); a frame with
// arg and data is a push routed by its arg, its payload the data, a
// snapshot when its action says so; a frame with a code and an op or id
// is an operation's response; the text "pong" answers the keepalive.
func oracle(frame []byte) protocoltest.Route {
	if string(frame) == "pong" {
		return protocoltest.Route{Kind: protocol.KindKeepalive}
	}
	m, ok := protocoltest.Members(frame)
	if !ok {
		return protocoltest.Unrecognized
	}
	reqID, hasID := id(m["id"])
	if raw, has := m["event"]; has {
		event, ok := protocoltest.String(raw)
		if !ok {
			return protocoltest.Unrecognized
		}
		switch event {
		case "subscribe", "unsubscribe":
			a, has := m["arg"]
			if !has {
				return protocoltest.Unrecognized
			}
			return protocoltest.Route{Kind: protocol.KindResponse, Result: string(a), ID: reqID, HasID: hasID}
		case "error":
			return protocoltest.Route{Kind: protocol.KindResponse, Error: string(frame), ID: reqID, HasID: hasID}
		case "login":
			return protocoltest.Route{Kind: protocol.KindResponse, Result: string(frame), ID: reqID, HasID: hasID}
		case "notice":
			r := protocoltest.Route{Kind: protocol.KindEvent, Data: string(frame)}
			if code, _ := protocoltest.String(m["code"]); code == "64008" {
				r.Event = protocol.EventReconnect
			}
			return r
		case "channel-conn-count":
			return protocoltest.Route{Kind: protocol.KindEvent, Data: string(frame)}
		case "channel-conn-count-error": // ends the subscriptions of its channel
			channel, ok := protocoltest.String(m["channel"])
			if !ok {
				return protocoltest.Unrecognized
			}
			return protocoltest.Route{Kind: protocol.KindEnded, Key: channel, Data: string(frame)}
		}
		return protocoltest.Unrecognized
	}
	a, hasArg := m["arg"]
	data, hasData := m["data"]
	if hasArg && hasData {
		key, ok := routeKey(a)
		if !ok {
			return protocoltest.Unrecognized
		}
		action, _ := protocoltest.String(m["action"])
		return protocoltest.Route{Kind: protocol.KindNotification, Key: key, Data: string(data), Snapshot: action == "snapshot"}
	}
	code, hasCode := m["code"]
	_, hasOp := m["op"]
	if hasCode && (hasOp || m["id"] != nil) {
		r := protocoltest.Route{Kind: protocol.KindResponse, ID: reqID, HasID: hasID}
		if c, _ := protocoltest.String(code); c == "0" {
			r.Result = string(frame)
			if hasData {
				r.Result = string(data)
			}
		} else {
			r.Error = string(frame)
		}
		return r
	}
	return protocoltest.Unrecognized
}
