package sidecar

import "github.com/wsfan/wsfan/pkg/client"

// Under -overflow drop-newest a client whose queue is full loses
// messages and stays connected. One that asked for marks (session.marks:
// SSE always, a WebSocket client with notify=gaps) is told, as it is of
// a hole upstream: its next message of each topic it lost some of comes
// after the encoding's mark (encoder.dropped: a gap notice with cause
// "dropped", an SSE gap mark), and the SDK flags that message FlagGap.
// When the mark itself finds no room, the message is dropped too and the
// mark stays owed, so no message arrives after a hole unmarked; a mark
// queued before a message that then found no room is not queued again.

// droppedFor records that s dropped a message of t under drop-newest (a
// closing session's drops need no mark). Called by t's offers.
func (s *session) droppedFor(t *topic) {
	if !s.marks || s.cfg.Overflow != client.DropNewest {
		return
	}
	s.holesMu.Lock()
	defer s.holesMu.Unlock()
	if _, ok := s.holes[t]; ok {
		return // owed already, or marked: the mark still goes before the next message
	}
	if s.holes == nil {
		s.holes = make(map[*topic]bool)
	}
	s.holes[t] = false // a mark is owed, not yet queued
	s.nholes.Add(1)
}

// owesMark reports whether a message of t needs the mark of messages s
// dropped before it.
func (s *session) owesMark(t *topic) bool {
	s.holesMu.Lock()
	defer s.holesMu.Unlock()
	queued, ok := s.holes[t]
	return ok && !queued
}

// marked records that a mark of t went into s's queue, if s had a hole
// of t.
func (s *session) marked(t *topic) {
	if s.nholes.Load() == 0 {
		return
	}
	s.holesMu.Lock()
	defer s.holesMu.Unlock()
	if _, ok := s.holes[t]; ok {
		s.holes[t] = true // its mark is queued; the message after it is not yet
	}
}

// holeFilled forgets s's hole of t: a message of t went into its queue,
// after the mark. The caller checked nholes.
func (s *session) holeFilled(t *topic) {
	s.holesMu.Lock()
	defer s.holesMu.Unlock()
	if _, ok := s.holes[t]; ok {
		delete(s.holes, t)
		s.nholes.Add(-1)
	}
}

// skipped counts a message not offered to s, its hole's mark having
// found no room, as a drop for a full queue.
func (s *session) skipped() {
	s.dropped.Add(1)
	s.stats.dropped[dropQueueFull].Add(1)
}

// markHole queues, for s, a client that asked for marks, the mark that
// goes before t's message: upstream, the message's own hole mark (nil
// for none), else the mark of messages s itself dropped, when one is
// owed. It reports false when the mark found no room: the mark stays
// owed and the message must not go without it.
func (t *topic) markHole(s *session, upstream []byte) bool {
	mark := upstream
	if mark == nil && s.owesMark(t) {
		mark = t.encoders[s.enc.id].dropped()
	}
	if mark == nil {
		return true
	}
	if s.offer(mark, false) {
		s.marked(t)
		return true
	}
	s.droppedFor(t)
	return false
}
