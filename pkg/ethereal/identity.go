package ethereal

// AppendIdentity appends what identifies an event: its data's timestamp
// t and, on a book change, the timestamp pt of the change it follows
// (the fields Sequence reads). An event without them is told apart by
// its content.
func (rules) AppendIdentity(dst, frame []byte) ([]byte, bool) {
	t, pt, _ := times(frame)
	if t == nil {
		return dst, false
	}
	return append(append(append(append(dst, 't'), t...), ','), pt...), true
}
