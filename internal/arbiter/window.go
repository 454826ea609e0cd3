package arbiter

// Sources is how many connections a Window counts apart: a Standby's
// one in use and up to three standbys.
const Sources = 4

// Window counts, for the last n identities a merged stream saw, how many
// times each source sent each and how many times it was delivered. The
// one given its slot longest ago is forgotten first, but an identity
// still in use when half the window has passed since it got its slot
// moves to a new one with its counts (a payload repeated on purpose,
// told apart by content), so the busy ones stay. It is not safe for
// concurrent use.
type Window struct {
	index index  // identity → its slot
	slots []Slot // a ring, grown up to its capacity
	next  int    // the slot to reuse next, once the ring is full
	given uint64 // slots given so far
}

// Slot is one identity's counts: how many times it was delivered, and
// how many times each source sent it.
type Slot struct {
	id        uint64
	at        uint64 // given when it was given its slot
	Delivered uint32
	Sent      [Sources]uint32
}

// NewWindow returns a window of n identities.
func NewWindow(n int) Window {
	return Window{index: newIndex(n), slots: make([]Slot, 0, n)}
}

// Add counts one more sending of id by source src (below Sources) and
// returns id's slot, valid until the next Add.
func (w *Window) Add(id uint64, src int) *Slot {
	i, ok := w.index.get(id)
	switch {
	case !ok:
		i = w.newSlot(id)
	case w.given-w.slots[i].at > uint64(cap(w.slots)/2): // still in use: keep it from eviction
		kept := w.slots[i]
		i = w.newSlot(id)
		w.slots[i].Delivered, w.slots[i].Sent = kept.Delivered, kept.Sent
	}
	s := &w.slots[i]
	s.Sent[src]++
	return s
}

// Slot returns id's slot, or nil once it is forgotten.
func (w *Window) Slot(id uint64) *Slot {
	if i, ok := w.index.get(id); ok {
		return &w.slots[i]
	}
	return nil
}

// newSlot gives id a slot, the oldest one's once the ring is full (an
// identity that moved on leaves a stale slot behind, which is reused
// without touching the index).
func (w *Window) newSlot(id uint64) int32 {
	w.given++
	if len(w.slots) < cap(w.slots) {
		w.slots = append(w.slots, Slot{id: id, at: w.given})
		i := int32(len(w.slots) - 1)
		w.index.put(id, i)
		return i
	}
	i := int32(w.next)
	w.index.delSlot(w.slots[i].id, i)
	w.slots[i] = Slot{id: id, at: w.given}
	w.index.put(id, i)
	if w.next++; w.next == len(w.slots) {
		w.next = 0
	}
	return i
}
