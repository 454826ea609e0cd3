package okx

import "github.com/wsfan/wsfan/pkg/protocol"

// venueTime reads a push's stamp: the "ts" of its data's first element,
// milliseconds as a string of digits; 0 when it has none. Classify and
// the book rules both read it so.
func venueTime(data []byte) int64 {
	ns, _ := protocol.Millis(protocol.Member(data, "ts"))
	return ns
}
