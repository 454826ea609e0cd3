package thalex

import (
	"github.com/wsfan/wsfan/pkg/book"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// venueTime reads a notification's stamp: its "time", Unix seconds with
// a fraction (a book's); 0 when it has none (a ticker's). Classify and
// the book rules both read it so.
func venueTime(data []byte) int64 {
	ns, _ := seconds(protocol.Member(data, "time"))
	return ns
}

// seconds reads a JSON number of Unix seconds, with a fraction, as
// nanoseconds; ok is false for anything else, or out of range.
func seconds(v []byte) (ns int64, ok bool) {
	if v == nil {
		return 0, false
	}
	secs, err := book.ParseDecimal(v)
	if err != nil {
		return 0, false
	}
	return secs.Units(9)
}
