package protocol_test

import (
	"testing"
	"unsafe"

	"github.com/wsfan/wsfan/pkg/deribit"
	"github.com/wsfan/wsfan/pkg/ethereal"
	"github.com/wsfan/wsfan/pkg/ethereum"
	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// FuzzClassify feeds arbitrary bytes to every dialect's classifier: it
// must never panic, every slice it returns must lie inside the frame (or
// the Frame), and a frame it calls a notification must have a key and a
// payload. Seeds live in testdata/fuzz/FuzzClassify.
func FuzzClassify(f *testing.F) {
	for _, s := range []string{
		`{"channel_name":"ticker.BTC-PERPETUAL.raw","notification":{"mark_price":68000.5}}`,
		`{"id":2,"result":["ticker.BTC-PERPETUAL.raw"]}`,
		`{"id":2,"error":{"code":4,"message":"throttle exceeded"}}`,
		`{"jsonrpc":"2.0","method":"subscription","params":{"channel":"book.X.100ms","data":{"change_id":1}}}`,
		`{"jsonrpc":"2.0","method":"heartbeat","params":{"type":"test_request"}}`,
		`[{"jsonrpc":"2.0","id":1,"result":"0x1"},{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"no"}}]`,
		`{"e":"L2Book","t":1,"data":{"s":"BTCUSD","t":2,"pt":1}}`,
		"{\"a\":\"\\\"\"}", `{"channel_name":"x","notification":}`, `{`, `"`, ``,
	} {
		f.Add([]byte(s))
	}
	dialects := []protocol.Protocol{thalex.Protocol(), deribit.Protocol(), ethereum.Protocol(), ethereal.Protocol()}
	f.Fuzz(func(t *testing.T, frame []byte) {
		for _, p := range dialects {
			var fr protocol.Frame
			err := p.Classify(frame, &fr)
			if err != nil {
				continue
			}
			for _, s := range [][]byte{fr.Result, fr.Error, fr.Data} {
				if s != nil && !within(frame, s) {
					t.Fatalf("%s: slice %q is not part of the frame", p.Name(), s)
				}
			}
			if fr.Kind == protocol.KindNotification && (fr.Key == nil || fr.Data == nil) {
				t.Fatalf("%s: notification without key or data", p.Name())
			}
			if fr.Kind == protocol.KindBatch {
				_ = protocol.EachElement(frame, func(e []byte) bool {
					var el protocol.Frame
					_ = p.Classify(e, &el)
					return true
				})
			}
			_, _, _ = p.Sequence(frame)
		}
	})
}

// within reports whether s is a sub-slice of frame: its bytes lie inside
// frame's backing array, not merely equal to some part of it.
func within(frame, s []byte) bool {
	if len(s) == 0 {
		return true
	}
	if len(frame) == 0 {
		return false
	}
	start := uintptr(unsafe.Pointer(unsafe.SliceData(frame)))
	at := uintptr(unsafe.Pointer(unsafe.SliceData(s)))
	return at >= start && at+uintptr(len(s)) <= start+uintptr(len(frame))
}
