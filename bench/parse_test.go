package bench

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/bytedance/sonic"

	"github.com/wsfan/wsfan/internal/jsonscan"
	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// parseFrames are the frames of the parse rows: RPC response (~30 B),
// ticker / market price (~100 B), order book (~300 B), large (~500 B).
var parseFrames = []struct {
	name  string
	frame []byte
	typed func([]byte) error // full decode into the frame's struct
}{
	{"rpc", FrameRPC, decodeTyped[struct{ OK int }]},
	{"ticker", FrameTicker, decodeTyped[Ticker]},
	{"book", FrameBook, decodeTyped[Book]},
	{"large", FrameLarge, decodeTyped[Ticker]},
}

func decodeTyped[T any](frame []byte) error {
	var f ThalexFrame[T]
	return sonic.Unmarshal(frame, &f)
}

// BenchmarkParse reads one Thalex frame (Ethereal SDK parse: 203 / 275 /
// 765 / 1392 ns; Thalex SDK full parse: RPC 349 ns, ticker 2.10 µs, large
// 39.6 µs). impl=classify is what wsfan's reader does on every frame: find
// the kind, id or topic and slice the payload, decoding nothing.
// impl=sonic-typed decodes the whole frame into structs, as a consumer's
// Message.Decode would; impl=sonic-any and impl=encoding-json-any decode
// into a generic value, like the Rust SDKs' serde_json::Value.
func BenchmarkParse(b *testing.B) {
	p := thalex.Protocol()
	for _, pf := range parseFrames {
		b.Run("msg="+pf.name+"/impl=classify", func(b *testing.B) {
			var f protocol.Frame
			b.SetBytes(int64(len(pf.frame)))
			b.ReportAllocs()
			for b.Loop() {
				if err := p.Classify(pf.frame, &f); err != nil {
					b.Fatal(err)
				}
			}
			if f.Kind != protocol.KindResponse && f.Kind != protocol.KindNotification {
				b.Fatal("unclassified: ", f.Kind)
			}
		})
		b.Run("msg="+pf.name+"/impl=sonic-typed", func(b *testing.B) {
			b.SetBytes(int64(len(pf.frame)))
			b.ReportAllocs()
			for b.Loop() {
				if err := pf.typed(pf.frame); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("msg="+pf.name+"/impl=sonic-any", func(b *testing.B) {
			b.SetBytes(int64(len(pf.frame)))
			b.ReportAllocs()
			for b.Loop() {
				var v any
				if err := sonic.Unmarshal(pf.frame, &v); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("msg="+pf.name+"/impl=encoding-json-any", func(b *testing.B) {
			b.SetBytes(int64(len(pf.frame)))
			b.ReportAllocs()
			for b.Loop() {
				var v any
				if err := json.Unmarshal(pf.frame, &v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// hasKey reports whether frame's top-level object has key, walking the
// members with the scanner the dialects use.
func hasKey(frame []byte, key string) bool {
	m := jsonscan.Object(frame, 0)
	for {
		k, _, ok := m.Next()
		if !ok {
			return false
		}
		if string(k) == key {
			return true
		}
		m.Skip()
	}
}

// BenchmarkKeyCheck asks whether a frame has a top-level key (Ethereal
// SDK: "id" 5.3 ns, "type" 7.9 ns; Thalex SDK: "id" 7.8 ns, "channel_name"
// 10.5 ns). impl=scan walks the members (a correct answer: a key nested
// in the payload does not count); impl=contains is bytes.Contains on the
// quoted key, the shortcut such checks usually are (fast, but fooled by a
// nested key or a string value).
func BenchmarkKeyCheck(b *testing.B) {
	ethereal := []byte(`{"type":"Ticker","data":{"s":"BTCUSD","price":"68012.81"}}`)
	for _, c := range []struct {
		key   string
		frame []byte
	}{
		{"id", FrameRPC},
		{"type", ethereal},
		{"channel_name", FrameTicker},
	} {
		quoted := []byte(`"` + c.key + `"`)
		b.Run("key="+c.key+"/impl=scan", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if !hasKey(c.frame, c.key) {
					b.Fatal("missing")
				}
			}
		})
		b.Run("key="+c.key+"/impl=contains", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if !bytes.Contains(c.frame, quoted) {
					b.Fatal("missing")
				}
			}
		})
	}
}
