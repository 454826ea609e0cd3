package kraken_test

import (
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/wsfan/wsfan/pkg/kraken"
	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/protocol/protocoltest"
)

// FuzzClassify: Kraken's classifier never panics and slices only the
// frame (protocoltest.FuzzClassify), seeded with the documented frames.
func FuzzClassify(f *testing.F) {
	protocoltest.FuzzClassify(f, kraken.Protocol(), documented(f)...)
}

// FuzzRoute checks Kraken's scanner against encoding/json on the same
// frame (protocoltest.FuzzRoute), with oracle as what a full parse
// implies.
func FuzzRoute(f *testing.F) {
	protocoltest.FuzzRoute(f, kraken.Protocol(), oracle, documented(f)...)
}

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

// reqID reads a req_id: an integer, or a string of digits.
func reqID(raw json.RawMessage) (uint64, bool) {
	if s, ok := protocoltest.String(raw); ok {
		raw = json.RawMessage(s)
	}
	return protocoltest.Uint(raw)
}

// oracle: a frame with a method or a success is a method's answer (a
// pong without req_id the keepalive's answer; success true its result, or the frame
// when it has none; else the frame as its error); a heartbeat or status
// channel an event; another channel's frame with data a message, routed
// by its channel and, for book, ticker, trade and ohlc, its first data
// item's symbol (and an ohlc's interval), a snapshot when its type says so.
func oracle(frame []byte) protocoltest.Route {
	m, ok := protocoltest.Members(frame)
	if !ok {
		return protocoltest.Unrecognized
	}
	rawMethod, hasMethod := m["method"]
	success, hasSuccess := m["success"]
	if hasMethod || hasSuccess {
		method, ok := protocoltest.String(rawMethod)
		if hasMethod && !ok {
			return protocoltest.Unrecognized
		}
		id, hasID := reqID(m["req_id"])
		if method == "pong" && !hasID {
			return protocoltest.Route{Kind: protocol.KindKeepalive, Data: string(frame)}
		}
		r := protocoltest.Route{Kind: protocol.KindResponse, ID: id, HasID: hasID}
		result, hasResult := m["result"]
		switch {
		case method == "pong":
			r.Result = string(frame)
		case string(success) == "true" && hasResult:
			r.Result = string(result)
		case string(success) == "true":
			r.Result = string(frame)
		default:
			r.Error = string(frame)
		}
		return r
	}
	rawChannel, hasChannel := m["channel"]
	if !hasChannel {
		return protocoltest.Unrecognized
	}
	channel, isString := protocoltest.String(rawChannel)
	if isString && (channel == "heartbeat" || channel == "status") {
		return protocoltest.Route{Kind: protocol.KindEvent, Data: string(frame)}
	}
	data, hasData := m["data"]
	if !isString || !hasData {
		return protocoltest.Unrecognized
	}
	key := channel
	switch channel {
	case "book", "ticker", "trade", "ohlc":
		var items []json.RawMessage
		var item map[string]json.RawMessage
		if json.Unmarshal(data, &items) == nil && len(items) > 0 {
			item, _ = protocoltest.Members(items[0])
		}
		symbol, ok := protocoltest.String(item["symbol"])
		if !ok {
			return protocoltest.Unrecognized
		}
		key += ":" + symbol
		if channel == "ohlc" {
			n, ok := protocoltest.Uint(item["interval"])
			if !ok {
				return protocoltest.Unrecognized
			}
			key += ":" + strconv.FormatUint(n, 10)
		}
	}
	typ, _ := protocoltest.String(m["type"])
	return protocoltest.Route{Kind: protocol.KindNotification, Key: key, Data: string(data), Snapshot: typ == "snapshot"}
}
