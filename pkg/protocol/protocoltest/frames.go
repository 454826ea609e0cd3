package protocoltest

import (
	"testing"

	"github.com/wsfan/wsfan/pkg/protocol"
)

// Frame is one of an exchange's frames in the spelling its servers send,
// with the kind it classifies as: the frames a client reads most, which
// seed the fuzz targets and time Classify.
type Frame struct {
	Name  string
	Frame []byte
	Kind  protocol.Kind
}

// Seeds returns the frames' bytes, to seed the fuzz targets.
func Seeds(frames []Frame) [][]byte {
	out := make([][]byte, len(frames))
	for i, f := range frames {
		out[i] = f.Frame
	}
	return out
}

// BenchmarkClassify times one Classify by p of each frame: what the
// reader spends before it looks a topic up.
func BenchmarkClassify(b *testing.B, p protocol.Protocol, frames []Frame) {
	for _, bf := range frames {
		b.Run(bf.Name, func(b *testing.B) {
			var f protocol.Frame
			b.SetBytes(int64(len(bf.Frame)))
			b.ReportAllocs()
			for b.Loop() {
				if err := p.Classify(bf.Frame, &f); err != nil {
					b.Fatal(err)
				}
			}
			if f.Kind != bf.Kind {
				b.Fatalf("classified as %v, want %v", f.Kind, bf.Kind)
			}
		})
	}
}
