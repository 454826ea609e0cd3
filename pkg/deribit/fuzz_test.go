package deribit_test

import (
	"encoding/json"
	"testing"

	"github.com/wsfan/wsfan/pkg/deribit"
	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/protocol/protocoltest"
)

// FuzzClassify: deribit's classifier never panics and slices only the frame
// (protocoltest.FuzzClassify). Seeds: testdata/fuzz/FuzzClassify.
func FuzzClassify(f *testing.F) { protocoltest.FuzzClassify(f, deribit.Protocol(), seedFrames...) }

// FuzzRoute checks deribit's key scanner against encoding/json on the same
// frame (protocoltest.FuzzRoute), with oracle as what a full parse
// implies. Seeds: testdata/fuzz/FuzzRoute.
func FuzzRoute(f *testing.F) { protocoltest.FuzzRoute(f, deribit.Protocol(), oracle, seedFrames...) }

// oracle: method "subscription" with a string params.channel and a
// params.data is a notification; method "heartbeat" is an event, a
// heartbeat request when params.type is "test_request".
func oracle(frame []byte) protocoltest.Route {
	return protocoltest.RPCOracle(frame, func(name string, params map[string]json.RawMessage) protocoltest.Route {
		switch name {
		case "subscription":
			channel, ok := protocoltest.String(params["channel"])
			data, hasData := params["data"]
			if !ok || !hasData {
				return protocoltest.Unrecognized
			}
			return protocoltest.Route{Kind: protocol.KindNotification, Key: channel, Data: string(data)}
		case "heartbeat":
			r := protocoltest.Route{Kind: protocol.KindEvent, Data: string(params["type"])}
			if typ, _ := protocoltest.String(params["type"]); typ == "test_request" {
				r.Kind = protocol.KindHeartbeat
			}
			return r
		}
		return protocoltest.Unrecognized
	})
}
