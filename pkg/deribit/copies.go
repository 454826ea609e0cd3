package deribit

// notifyHead is how Deribit writes a notification, up to its channel.
const notifyHead = `{"jsonrpc":"2.0","method":"subscription","params":{"channel":"`

// CopyBytes returns a notification whole: Deribit writes nothing of a
// connection's own in one, so two connections' copies of a raw channel's
// message are the same bytes (a conflated channel's, cut at each
// connection's own instants, may not be).
func (rules) CopyBytes(frame []byte) ([]byte, bool) {
	if len(frame) <= len(notifyHead) || string(frame[:len(notifyHead)]) != notifyHead {
		return nil, false
	}
	return frame, true
}
