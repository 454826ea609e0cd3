package deribit

import "github.com/wsfan/wsfan/pkg/protocol"

// venueTime reads a notification's stamp: its data's "timestamp",
// milliseconds (a book, a ticker), or its first element's in a list of
// them (trades); 0 when it has none. Classify and the book rules both
// read it so.
func venueTime(data []byte) int64 {
	ns, _ := protocol.Millis(protocol.Member(data, "timestamp"))
	return ns
}
