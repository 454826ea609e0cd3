package okx

// pushHead is how OKX writes a push, up to its channel's name: a data
// push opens with its argument; an answer or an event (subscribe,
// error, notice, channel-conn-count), the frames that carry the
// connection's connId, opens with "id" or "event".
const pushHead = `{"arg":{"channel":"`

// CopyBytes returns a push whole: OKX writes nothing of a connection's
// own in one (its documented pushes, testdata/documented.txt, carry the
// argument, an action and the data; connId only in answers and events;
// a private channel's uid is the account's, the same on every
// connection), so two connections' copies of a push are the same bytes
// where OKX cuts them the same (a channel conflated at each connection's
// own instants, as books5 and tickers may be, can differ: its copies go
// to the identity merge) (protocol.MessageReader).
func (rules) CopyBytes(frame []byte) ([]byte, bool) {
	if len(frame) <= len(pushHead) || string(frame[:len(pushHead)]) != pushHead {
		return nil, false
	}
	return frame, true
}
