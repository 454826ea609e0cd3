package thalex

// notifyHead is how Thalex writes a notification, up to its channel;
// systemHead is its system channel's, which carries events to each
// connection (a reconnect notice) rather than data.
const (
	notifyHead = `{"channel_name":"`
	systemHead = notifyHead + `system"`
)

// CopyBytes returns a notification whole: Thalex writes nothing of a
// connection's own in one. Not the system channel's: its events are each
// connection's to act on (a leg that dropped a reconnect notice as a
// copy of another leg's would not reconnect before the server closes
// it).
func (rules) CopyBytes(frame []byte) ([]byte, bool) {
	if len(frame) <= len(notifyHead) || string(frame[:len(notifyHead)]) != notifyHead ||
		len(frame) >= len(systemHead) && string(frame[:len(systemHead)]) == systemHead {
		return nil, false
	}
	return frame, true
}
