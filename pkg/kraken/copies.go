package kraken

import (
	"bytes"

	"github.com/wsfan/wsfan/pkg/protocol"
)

// messages is what Kraken's messages carry for a reader: their copy
// layout (CopyBytes); identities are their content.
type messages struct{ protocol.ReadsNothing }

// notifyHead is how Kraken writes a channel's message, up to the
// channel's name; typeHead follows the name in a message of data.
const (
	notifyHead = `{"channel":"`
	typeHead   = `","type":"`
)

// copyChannels are the channels whose messages are the same on every
// connection: the market data. Not status, sent on connect with the
// connection's connection_id; not heartbeat, a connection's own; not
// the private executions and balances, which number their messages
// (sequence) on each connection.
var copyChannels = map[string]bool{"book": true, "ticker": true, "trade": true, "ohlc": true, "instrument": true}

// CopyBytes returns a market-data message whole: Kraken writes nothing
// of a connection's own in one (its documented messages,
// testdata/documented.txt, carry the channel, the type and the data), so
// two connections' copies are the same bytes where Kraken cuts them the
// same (protocol.MessageReader).
func (messages) CopyBytes(frame []byte) ([]byte, bool) {
	if len(frame) <= len(notifyHead) || string(frame[:len(notifyHead)]) != notifyHead {
		return nil, false
	}
	rest := frame[len(notifyHead):]
	end := bytes.IndexByte(rest, '"')
	if end < 0 || !bytes.HasPrefix(rest[end:], []byte(typeHead)) || !copyChannels[string(rest[:end])] {
		return nil, false
	}
	return frame, true
}
