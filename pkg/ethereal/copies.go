package ethereal

import "github.com/wsfan/wsfan/internal/jsonscan"

// eventHead is how Ethereal writes an event, up to its type; stampHead
// follows the type, and dataHead the stamp.
const (
	eventHead = `{"e":"`
	stampHead = `","t":`
	dataHead  = `,"data":`
)

// CopyBytes returns an event's data: {"e":TYPE,"t":MS,"data":DATA}
// (testdata/documented.txt) from "data" on. The top-level t is the
// server's time, which a server may stamp as it writes to each
// connection; the data, which carries its own t and its symbol or
// subaccount, is the same on every connection where Ethereal cuts it
// the same. Each type's data has a layout of its own, so two types'
// data are never the same bytes (protocol.MessageReader).
func (rules) CopyBytes(frame []byte) ([]byte, bool) {
	if len(frame) <= len(eventHead) || string(frame[:len(eventHead)]) != eventHead {
		return nil, false
	}
	rest := frame[len(eventHead):]
	i := jsonscan.PlainLen(rest)
	if i >= len(rest) || len(rest[i:]) <= len(stampHead) || string(rest[i:i+len(stampHead)]) != stampHead {
		return nil, false
	}
	rest = rest[i+len(stampHead):]
	i = 0
	for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
		i++
	}
	if i == 0 || len(rest[i:]) <= len(dataHead) || string(rest[i:i+len(dataHead)]) != dataHead {
		return nil, false
	}
	return rest[i+1:], true
}
