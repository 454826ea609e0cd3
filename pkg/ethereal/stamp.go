package ethereal

import "github.com/wsfan/wsfan/pkg/protocol"

// venueTime reads an event's stamp: its top-level "t", milliseconds
// (the payload is the whole frame); 0 when it has none. The book rules
// read a book's data.t, its sequence number, with the same Millis.
func venueTime(data []byte) int64 {
	ns, _ := protocol.Millis(protocol.Member(data, "t"))
	return ns
}
