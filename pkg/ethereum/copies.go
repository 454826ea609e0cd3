package ethereum

import "github.com/wsfan/wsfan/internal/jsonscan"

// notifyHead is how a node writes a notification, up to its subscription
// id: the one part of it that differs between two connections' copies.
const notifyHead = `{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"`

// CopyBytes returns a notification from just after its subscription id,
// which the node gives each connection its own: two connections' copies
// of one head or log are the same from there (protocol.MessageReader).
func (dialect) CopyBytes(frame []byte) ([]byte, bool) {
	if len(frame) <= len(notifyHead) || string(frame[:len(notifyHead)]) != notifyHead {
		return nil, false
	}
	rest := frame[len(notifyHead):]
	q := jsonscan.PlainLen(rest)
	if q >= len(rest) || rest[q] != '"' {
		return nil, false
	}
	return rest[q+1:], true
}
