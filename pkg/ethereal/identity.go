package ethereal

import (
	"github.com/wsfan/wsfan/internal/jsonscan"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// AppendIdentity appends what identifies an event: its data's timestamp
// t and, on a book change, the timestamp pt of the change it follows
// (the fields Sequence reads). An event without them is told apart by
// its content.
func (dialect) AppendIdentity(dst, frame []byte) ([]byte, bool) {
	m := jsonscan.Object(frame, 0)
	for {
		key, start, more := m.Next()
		if !more {
			return dst, false
		}
		if string(key) != "data" {
			m.Skip()
			continue
		}
		var t, pt []byte
		d := jsonscan.Object(frame, start)
		for {
			k, vs, more := d.Next()
			if !more {
				break
			}
			end := d.Skip()
			switch string(k) {
			case "t":
				t = frame[vs:end]
			case "pt":
				pt = frame[vs:end]
			}
		}
		if t == nil {
			return dst, false
		}
		return append(append(append(append(dst, 't'), t...), ','), pt...), true
	}
}

var _ protocol.Identifying = dialect{}
