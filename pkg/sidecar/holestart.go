package sidecar

// A hole is told when it starts, not only with the next message: when a
// NATS group member sees its source stop (its link to the group dead,
// or the leader's report of the group's upstream down: natssource.go),
// every topic's sessions that take marks get the encoding's down mark
// at once (a WebSocket program that asked, the "down" gap notice; an
// SSE stream, its gap mark). The hole's end is marked as before, on the
// topic's next message (a new leader's first is reconnected, a lost
// sequence a gap).

// holeStarts sends every live topic's down mark. Called by the source's
// goroutine; the topics' pumps may offer to the same sessions meanwhile
// (session.offer serializes them).
func (h *hub) holeStarts() {
	for _, t := range h.list() {
		t.holeStarts()
	}
}

// holeStarts offers the topic's down mark, one an encoding in use, to
// its subscribers that take marks.
func (t *topic) holeStarts() {
	var marks [numEncodings][]byte
	t.mu.Lock()
	subs := t.subs // copy on write: a snapshot
	for id, n := range t.users {
		if n > 0 {
			marks[id] = t.encoders[id].down()
		}
	}
	t.mu.Unlock()
	for _, s := range subs {
		if m := marks[s.enc.id]; m != nil && s.marks {
			s.offer(m, false)
		}
	}
}
