package arbiter

// index maps a Window's identities to their slots: an open-addressed
// table with linear probing, of twice the window's slots rounded up to a
// power of two, so that a look-up, an insertion and a deletion are each
// a probe or two of one small array and never allocate. A Go map took
// three to four map operations an identity (its look-up, the evicted
// one's look-up and deletion, its insertion), about 0.13 µs of a hot
// standby's merge under a blast. Identities are hashes already: their
// low bits are the home position.
type index struct {
	entries []indexEntry // a power of two of them
	mask    uint64
}

// indexEntry is an identity and its slot plus one; 0: empty.
type indexEntry struct {
	id   uint64
	slot int32
}

// newIndex returns an index for n identities at most.
func newIndex(n int) index {
	size := 2
	for size < 2*n {
		size <<= 1
	}
	return index{entries: make([]indexEntry, size), mask: uint64(size - 1)}
}

// get returns id's slot.
func (x *index) get(id uint64) (int32, bool) {
	for i := id & x.mask; ; i = (i + 1) & x.mask {
		e := &x.entries[i]
		if e.slot == 0 {
			return 0, false
		}
		if e.id == id {
			return e.slot - 1, true
		}
	}
}

// put sets id's slot.
func (x *index) put(id uint64, slot int32) {
	for i := id & x.mask; ; i = (i + 1) & x.mask {
		e := &x.entries[i]
		if e.slot == 0 || e.id == id {
			e.id, e.slot = id, slot+1
			return
		}
	}
}

// delSlot removes id when its slot is slot (an identity that moved on
// to a new slot keeps it there), in one probe of the table, moving back
// the entries after it that probing would no longer reach (no
// tombstones: the table never fills with them).
func (x *index) delSlot(id uint64, slot int32) {
	i := id & x.mask
	for {
		e := &x.entries[i]
		if e.slot == 0 {
			return
		}
		if e.id == id {
			if e.slot != slot+1 {
				return
			}
			break
		}
		i = (i + 1) & x.mask
	}
	for j := (i + 1) & x.mask; ; j = (j + 1) & x.mask {
		e := x.entries[j]
		if e.slot == 0 {
			break
		}
		// e stays unless its home lies cyclically outside (i, j]: the
		// hole at i would cut it off from its home.
		home := e.id & x.mask
		if (j-home)&x.mask >= (j-i)&x.mask {
			x.entries[i] = e
			i = j
		}
	}
	x.entries[i] = indexEntry{}
}

// len is how many identities the index holds.
func (x *index) len() int {
	n := 0
	for _, e := range x.entries {
		if e.slot != 0 {
			n++
		}
	}
	return n
}
