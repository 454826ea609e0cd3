package arbiter

import "sync"

// Side is which of a switch-back's two connections a message came on.
type Side uint8

const (
	Old Side = iota // the connection being left, which delivers until the streams meet
	New             // the connection taking its place
)

// Seam is where a switch-back's two streams of each topic meet (pkg/client
// takes its preferred endpoint back, make before break). From the moment
// the new connection subscribes, each topic's messages come on both: the
// old connection's are delivered as before, and their identities
// noted; the new connection's are held. The first message seen on both
// is the seam: from there on only the new connection delivers the
// topic, its held messages past the seam first. A topic with no message
// yet on either has not met: the old connection may have one on its
// way that the new one, subscribed too late, never gets. At the end of
// the overlap (Finish) each topic whose streams never met gets its held
// messages, and is the new connection's from then on. T is a topic's
// key, M a message. Safe for concurrent use: every decision and
// delivery runs under one lock, so a topic's messages keep their order.
type Seam[T comparable, M any] struct {
	ops   SeamOps[T, M]
	limit int

	// topics are the topics the new connection subscribed, fixed before
	// it did: only theirs are checked, and each must meet (or the
	// overlap end) before the old connection closes. A topic subscribed
	// after the new connection was handed out comes on it alone.
	topics map[T]bool

	mu       sync.Mutex // orders every decision and delivery of both sides
	seams    map[T]*seam[M]
	finished bool // the old connection delivers nothing more
}

// SeamOps is what a Seam calls, under its lock.
type SeamOps[T comparable, M any] struct {
	ID      func(T, M) uint64 // a message's identity (client.Identifier)
	Deliver func(Side, T, M)  // delivers a message as the connection of that side
	Keep    func(M) M         // a copy of a message to hold: the readers' buffers are not kept
	Resumed func(T)           // the topic's next message says what may be missing
	Left    func(T) bool      // the topic has no subscriber any more: nothing to deliver
}

// seam is one topic's overlap.
type seam[M any] struct {
	met  bool           // only the new connection delivers the topic
	seen map[uint64]int // identities the old connection delivered since the overlap began, counted
	held []held[M]      // the new connection's messages, not yet known to be past the old one's
	// last is the identity of the old connection's last delivery, and
	// past says the new connection has passed it: only then may the
	// overlap end, the new connection's messages then passing unchecked.
	last uint64
	past bool
}

// held is one message of the new connection, held.
type held[M any] struct {
	id uint64
	m  M
}

// NewSeam returns the seam of topics, holding at most limit messages of
// the new connection a topic (and counting at most limit identities of
// the old one's).
func NewSeam[T comparable, M any](topics []T, limit int, ops SeamOps[T, M]) *Seam[T, M] {
	s := &Seam[T, M]{ops: ops, limit: limit, topics: make(map[T]bool, len(topics)), seams: make(map[T]*seam[M])}
	for _, t := range topics {
		s.topics[t] = true
	}
	return s
}

// Offer takes a message of topic t from side's connection: it is
// delivered, held, or dropped as delivered already.
//
// The streams meet at the first message both carry. When the old
// connection is behind, that is a message the new one holds: the old
// one delivers it, the new one's held messages after it follow, and the
// old one delivers nothing more. When the new connection is behind, it
// is a message the old one delivered: the old one delivers nothing more,
// and the new one skips what the old one delivered (each delivery of an
// identity skips one arrival of it) and delivers the rest, which
// continue the old one's stream.
func (sm *Seam[T, M]) Offer(side Side, t T, m M) {
	sm.mu.Lock()
	defer sm.mu.Unlock()
	if !sm.topics[t] {
		// Subscribed after the new connection was handed out, on it alone:
		// what the old one brings under the same key is an older
		// subscription's, left there.
		if side == New {
			sm.ops.Deliver(New, t, m)
		}
		return
	}
	s := sm.seams[t]
	if s == nil {
		s = &seam[M]{seen: make(map[uint64]int)}
		sm.seams[t] = s
	}
	switch {
	case side == Old && (sm.finished || s.met):
		// The new connection carries the topic now.
	case side == Old:
		id := sm.ops.ID(t, m)
		sm.ops.Deliver(Old, t, m)
		if i := s.heldIndex(id); i >= 0 { // the old connection was behind
			sm.meet(s, t, i+1)
			return
		}
		if len(s.seen) < sm.limit {
			s.seen[id]++
		}
		s.last = id
	default: // the new connection
		id := sm.ops.ID(t, m)
		if n := s.seen[id]; n > 0 { // delivered by the old connection
			s.seen[id] = n - 1
			if !s.met {
				s.met, s.held = true, nil // the new connection was behind: it carries on from here
			}
			s.past = s.past || id == s.last
			return
		}
		if s.met {
			sm.ops.Deliver(New, t, m)
			return
		}
		if len(s.held) >= sm.limit { // the old connection fell that far behind
			sm.meet(s, t, 0)
			sm.ops.Resumed(t) // the next message says what may be missing
			sm.ops.Deliver(New, t, m)
			return
		}
		s.held = append(s.held, held[M]{id: id, m: sm.ops.Keep(m)})
	}
}

// heldIndex is the index of the held message with identity id, or -1.
func (s *seam[M]) heldIndex(id uint64) int {
	for i, h := range s.held {
		if h.id == id {
			return i
		}
	}
	return -1
}

// meet hands t to the new connection, the old one being behind: its
// held messages from index from on are delivered, the ones before were
// delivered by the old connection. Called with sm.mu held.
func (sm *Seam[T, M]) meet(s *seam[M], t T, from int) {
	for _, h := range s.held[from:] {
		sm.ops.Deliver(New, t, h.m)
	}
	s.met, s.held, s.past = true, nil, true
	clear(s.seen) // the old connection delivered nothing the new one will bring
}

// AllMet reports whether every topic is carried by the new connection
// alone, past the old one's last delivery. A topic that had no message
// yet on either connection has not met: the old one may still have some
// on the way, which the new one never gets (a first version ended the
// overlap before any message came, and lost the one the old connection
// was still reading).
func (sm *Seam[T, M]) AllMet() bool {
	sm.mu.Lock()
	defer sm.mu.Unlock()
	for t := range sm.topics {
		if sm.ops.Left(t) {
			continue // left meanwhile: nothing to deliver
		}
		if s := sm.seams[t]; s == nil || !s.met || !s.past {
			return false
		}
	}
	return true
}

// Finish ends the overlap: the old connection delivers nothing more, and
// each topic whose streams never met gets its held messages: all new,
// when the old connection delivered nothing of the topic meanwhile;
// after a possible hole otherwise (the old connection failed, or the
// streams did not meet in time), which the first of them says
// (SeamOps.Resumed). A topic quiet throughout is the new connection's
// from its first message.
func (sm *Seam[T, M]) Finish(oldFailed bool) {
	sm.mu.Lock()
	defer sm.mu.Unlock()
	sm.finished = true
	for t := range sm.topics {
		if sm.seams[t] == nil {
			sm.seams[t] = &seam[M]{met: true, past: true}
		}
	}
	for t, s := range sm.seams {
		switch {
		case s.met:
		case len(s.held) == 0:
			// Only the old connection had messages: the new one, behind,
			// skips them when they come (Offer).
			s.met = true
		default:
			if oldFailed || len(s.seen) > 0 {
				sm.ops.Resumed(t)
			}
			sm.meet(s, t, 0)
		}
	}
}
