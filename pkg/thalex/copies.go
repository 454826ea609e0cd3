package thalex

// notifyHead is how Thalex writes a notification, up to its channel.
const notifyHead = `{"channel_name":"`

// CopyBytes returns a notification whole: Thalex writes nothing of a
// connection's own in one.
func (rules) CopyBytes(frame []byte) ([]byte, bool) {
	if len(frame) <= len(notifyHead) || string(frame[:len(notifyHead)]) != notifyHead {
		return nil, false
	}
	return frame, true
}
