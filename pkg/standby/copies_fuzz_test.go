package standby

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"github.com/wsfan/wsfan/pkg/deribit"
	"github.com/wsfan/wsfan/pkg/ethereal"
	"github.com/wsfan/wsfan/pkg/ethereum"
	"github.com/wsfan/wsfan/pkg/kraken"
	"github.com/wsfan/wsfan/pkg/okx"
	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// copyVenues are the venues whose notifications have copy bytes, by the
// name of their package.
var copyVenues = map[string]protocol.Protocol{
	"deribit": deribit.Protocol(), "ethereal": ethereal.Protocol(), "ethereum": ethereum.Protocol(),
	"kraken": kraken.Protocol(), "okx": okx.Protocol(), "thalex": thalex.Protocol(),
}

// FuzzCopyBytes: no venue's CopyBytes panics on any frame or returns
// bytes outside it, and none hashes a frame its classifier reads as
// anything but a notification (an answer, an event, a heartbeat), which
// a leg must act on however many legs read it. Seeds: every venue's
// documented frames; testdata/fuzz/FuzzCopyBytes.
func FuzzCopyBytes(f *testing.F) {
	for name := range copyVenues {
		doc, err := os.ReadFile(filepath.Join("..", name, "testdata", "documented.txt"))
		if err != nil {
			f.Fatal(err)
		}
		for line := range strings.Lines(string(doc)) {
			if _, frame, ok := strings.Cut(strings.TrimPrefix(strings.TrimSpace(line), "<-- "), " "); ok && strings.HasPrefix(line, "<-- ") {
				f.Add([]byte(frame))
			}
		}
	}
	f.Fuzz(func(t *testing.T, frame []byte) {
		for name, p := range copyVenues {
			b, ok := p.Venue().Messages.CopyBytes(frame)
			if !ok {
				continue
			}
			start := uintptr(unsafe.Pointer(unsafe.SliceData(frame)))
			at := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
			if len(b) > 0 && (at < start || at+uintptr(len(b)) > start+uintptr(len(frame))) {
				t.Fatalf("%s: copy bytes outside the frame", name)
			}
			var f protocol.Frame
			if p.Classify(frame, &f) == nil && f.Kind != protocol.KindNotification {
				t.Fatalf("%s hashes a frame of kind %v: %q", name, f.Kind, frame)
			}
		}
	})
}
