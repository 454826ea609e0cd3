package protocol

// Copies is an optional interface of a dialect whose notifications read
// the same, byte for byte, on every connection to the venue, but for a
// part the venue gives each connection (an Ethereum subscription id). A
// composite whose connections carry the same subscriptions (package
// standby) then drops a copy of a notification another connection
// delivered by a hash of those bytes, before classifying it.
type Copies interface {
	// CopyBytes reports whether frame is a notification in the venue's
	// compact layout and returns the part of it that is the same in
	// every connection's copy: the frame from just after any part the
	// venue writes per connection (what comes before being the layout's
	// own, the same in every frame it accepts). It returns false for
	// anything else (an answer, a heartbeat, another layout), which is
	// then classified as usual. It must not keep frame.
	CopyBytes(frame []byte) ([]byte, bool)
}
