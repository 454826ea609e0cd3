package ethereum_test

import (
	"testing"

	"github.com/wsfan/wsfan/pkg/ethereum"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// TestVenueTime: Classify reads a notification's stamp, as the venue
// documents it, only when asked (Frame.WantTime).
func TestVenueTime(t *testing.T) {
	p := ethereum.Protocol()
	for _, c := range []struct {
		frame string
		want  int64
	}{
		{`{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"0xcd0c3e8af590364c09d0fa6a1210faf5","result":{"number":"0x1b4","timestamp":"0x56ffeff8"}}}`, 0x56ffeff8 * 1e9},
		{`{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"0xcd0c3e8af590364c09d0fa6a1210faf5","result":{"address":"0x8320fe7702b96808f7bbc0d4a888ed1468216cfd","logIndex":"0x0"}}}`, 0},
	} {
		var f protocol.Frame
		if err := p.Classify([]byte(c.frame), &f); err != nil || f.Time != 0 {
			t.Fatalf("unasked: time %d, err %v: %s", f.Time, err, c.frame)
		}
		f.WantTime = true
		if err := p.Classify([]byte(c.frame), &f); err != nil || f.Time != c.want {
			t.Errorf("time %d, want %d (err %v): %s", f.Time, c.want, err, c.frame)
		}
	}
}
