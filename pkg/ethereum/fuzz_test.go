package ethereum_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/wsfan/wsfan/pkg/ethereum"
	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/protocol/protocoltest"
)

// FuzzClassify: ethereum's classifier never panics and slices only the frame
// (protocoltest.FuzzClassify). Seeds: testdata/fuzz/FuzzClassify.
func FuzzClassify(f *testing.F) { protocoltest.FuzzClassify(f, ethereum.Protocol(), seedFrames...) }

// FuzzRoute checks ethereum's key scanner against encoding/json on the same
// frame (protocoltest.FuzzRoute), with oracle as what a full parse
// implies. Seeds: testdata/fuzz/FuzzRoute.
func FuzzRoute(f *testing.F) { protocoltest.FuzzRoute(f, ethereum.Protocol(), oracle, seedFrames...) }

// oracle: an array is a batch; method "eth_subscription" with a
// string params.subscription and a params.result is a notification.
func oracle(frame []byte) protocoltest.Route {
	if v := bytes.TrimLeft(frame, " \t\r\n"); len(v) > 0 && v[0] == '[' {
		return protocoltest.Route{Kind: protocol.KindBatch, Data: string(frame)}
	}
	return protocoltest.RPCOracle(frame, func(name string, params map[string]json.RawMessage) protocoltest.Route {
		sub, ok := protocoltest.String(params["subscription"])
		result, hasResult := params["result"]
		if name != "eth_subscription" || !ok || !hasResult {
			return protocoltest.Unrecognized
		}
		return protocoltest.Route{Kind: protocol.KindNotification, Key: sub, Data: string(result)}
	})
}
