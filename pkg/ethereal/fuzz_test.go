package ethereal_test

import (
	"encoding/json"
	"testing"

	"github.com/wsfan/wsfan/pkg/ethereal"
	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/protocol/protocoltest"
)

// FuzzClassify: ethereal's classifier never panics and slices only the frame
// (protocoltest.FuzzClassify). Seeds: testdata/fuzz/FuzzClassify.
func FuzzClassify(f *testing.F) { protocoltest.FuzzClassify(f, ethereal.Protocol(), seedFrames...) }

// FuzzRoute checks ethereal's key scanner against encoding/json on the same
// frame (protocoltest.FuzzRoute), with oracle as what a full parse
// implies. Seeds: testdata/fuzz/FuzzRoute.
func FuzzRoute(f *testing.F) { protocoltest.FuzzRoute(f, ethereal.Protocol(), oracle, seedFrames...) }

// accountID is what an account event routes by: data.sid, else the sid
// of data.d's first item when that is an object holding one, else
// data.subaccountId.
func accountID(data map[string]json.RawMessage) json.RawMessage {
	if sid, ok := data["sid"]; ok {
		return sid
	}
	var items []json.RawMessage
	if json.Unmarshal(data["d"], &items) == nil && len(items) > 0 {
		if first, ok := protocoltest.Members(items[0]); ok {
			if sid, ok := first["sid"]; ok {
				return sid
			}
		}
	}
	return data["subaccountId"]
}

// subaccountTypes (the oracle's own copy) mirrors the dialect's list of streams keyed by
// subaccount.
var subaccountTypes = map[string]bool{
	"OrderFill": true, "OrderUpdate": true, "SubaccountLiquidation": true,
	"TokenTransfer": true, "PositionUpdate": true,
}

// oracle: a string "e" with an object "data" is a notification of
// the topic e:ID, ID being data.subaccountId for subaccount streams and
// data.s (or data.symbol when there is no s) for the others, a string.
func oracle(frame []byte) protocoltest.Route {
	m, ok := protocoltest.Members(frame)
	if !ok {
		return protocoltest.Unrecognized
	}
	typ, ok := protocoltest.String(m["e"])
	data, isObject := protocoltest.Members(m["data"])
	if !ok || !isObject {
		return protocoltest.Unrecognized
	}
	idRaw, hasS := data["s"]
	if !hasS {
		idRaw = data["symbol"]
	}
	if subaccountTypes[typ] {
		idRaw = accountID(data)
	}
	id, ok := protocoltest.String(idRaw)
	if !ok {
		return protocoltest.Unrecognized
	}
	return protocoltest.Route{Kind: protocol.KindNotification, Key: typ + ":" + id, Data: string(frame)}
}
