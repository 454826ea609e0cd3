package thalex

import "github.com/wsfan/wsfan/pkg/protocol"

// notifyHead is how Thalex writes a notification, up to its channel.
const notifyHead = `{"channel_name":"`

// CopyBytes returns a notification whole: Thalex writes nothing of a
// connection's own in one (protocol.Copies).
func (dialect) CopyBytes(frame []byte) ([]byte, bool) {
	if len(frame) <= len(notifyHead) || string(frame[:len(notifyHead)]) != notifyHead {
		return nil, false
	}
	return frame, true
}

var _ protocol.Copies = dialect{}
