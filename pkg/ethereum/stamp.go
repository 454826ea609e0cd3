package ethereum

import (
	"math"
	"strconv"

	"github.com/wsfan/wsfan/internal/jsonscan"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// venueTime reads a head's stamp: its "timestamp", Unix seconds as a
// hex quantity ("0x6553f100"), whole seconds, so coarse; 0 for a
// message that has none (a log).
func venueTime(data []byte) int64 {
	v, ok := jsonscan.String(protocol.Member(data, "timestamp"), nil)
	if !ok || len(v) < 3 || v[0] != '0' || v[1] != 'x' {
		return 0
	}
	secs, err := strconv.ParseUint(string(v[2:]), 16, 64)
	if err != nil || secs > math.MaxInt64/1_000_000_000 {
		return 0
	}
	return int64(secs) * 1e9
}
