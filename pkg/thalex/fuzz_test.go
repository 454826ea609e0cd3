package thalex_test

import (
	"testing"

	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/protocol/protocoltest"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// FuzzClassify: thalex's classifier never panics and slices only the frame
// (protocoltest.FuzzClassify). Seeds: testdata/fuzz/FuzzClassify.
func FuzzClassify(f *testing.F) { protocoltest.FuzzClassify(f, thalex.Protocol(), seedFrames...) }

// FuzzRoute checks thalex's key scanner against encoding/json on the same
// frame (protocoltest.FuzzRoute), with oracle as what a full parse
// implies. Seeds: testdata/fuzz/FuzzRoute.
func FuzzRoute(f *testing.F) { protocoltest.FuzzRoute(f, thalex.Protocol(), oracle, seedFrames...) }

// oracle: a string "channel_name" with a "notification" is a
// notification (an event on the system channel, a reconnect when its
// "event" is "reconnect"); else a frame with "id", "result" or "error" is
// a response.
func oracle(frame []byte) protocoltest.Route {
	m, ok := protocoltest.Members(frame)
	if !ok {
		return protocoltest.Unrecognized
	}
	channel, isString := protocoltest.String(m["channel_name"])
	note, hasNote := m["notification"]
	if !isString || !hasNote {
		r, _ := protocoltest.Response(m)
		return r
	}
	snapshot := string(m["snapshot"]) == "true"
	if channel != "system" {
		return protocoltest.Route{Kind: protocol.KindNotification, Key: channel, Data: string(note), Snapshot: snapshot}
	}
	r := protocoltest.Route{Kind: protocol.KindEvent, Key: channel, Data: string(note), Snapshot: snapshot}
	if n, ok := protocoltest.Members(note); ok {
		if ev, _ := protocoltest.String(n["event"]); ev == "reconnect" {
			r.Event = protocol.EventReconnect
		}
	}
	return r
}
