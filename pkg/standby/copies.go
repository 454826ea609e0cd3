package standby

import (
	"sync"
	"time"
	"unsafe"

	"github.com/zeebo/xxh3"

	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// The fast path. Where a venue writes a notification the same, byte for
// byte, on every connection but for a part each connection is given
// (protocol.MessageReader.CopyBytes: an Ethereum subscription id), each leg's reader
// hashes those bytes (xxh3, 128 bits) before classifying the frame, and
// counts how many times the leg has read that hash. A copy the leg has
// read no more times than the merged stream delivered it (first
// arrivals, from any leg) is dropped there and then: no parse, no route,
// no merge lock (client.WithCopyFilter). Counting each leg's readings
// keeps two identical events on one leg apart: the second is dropped
// only once another leg delivered a second one too.
//
// The merge learns what a dropped copy told: how far its leg has come
// (its last arrival, for the rejoin rule; its place in a placed topic,
// for the never-goes-backwards rule, order.go) at once, through atomics,
// and its identity count (merge.go's window) on the leg's next offer,
// or after copyFold copies, under the lock. A leg rejoining after a hole
// drops nothing here: its copies tell the merge where it stands. What
// this does not match (a copy ahead of its first arrival's delivery, a
// frame of another layout, a conflated channel cut differently on each
// connection, a hash forgotten) goes on to the identity merge, which
// stays the safety net. Answers are never hashed (CopyBytes refuses
// them).
//
// Each hash has a slot of a fixed table, chosen by its low bits, under
// the slot's own lock (held for a few loads and stores: no map, no
// allocation, and two legs reading one frame at once wait for each other
// a few nanoseconds). A hash whose slot another holds takes it, and the
// other's counts are forgotten with it: a forgotten hash's next reading
// is a first arrival, which the identity merge judges. The table holds
// copySlots hashes, far more than two legs are apart in messages at a
// venue's pace; a leg further behind (back from a long hole, or stalled
// under a blast on a busy machine: 24,000 heads were seen) has its
// copies judged by the identity merge and the place rule instead.

const (
	copySlots = 1 << 14 // slots of the table: a power of two
	copyFold  = 64      // a leg's dropped copies counted under the lock at once, at most
)

// copies is a Standby's fast path: the hashes its legs read, and each
// leg's last frame.
type copies struct {
	proto protocol.MessageReader
	slots []copySlot // copySlots of them
	legs  []copyLeg  // legs[i] is leg i's, owned by its reader
}

// copySlot is a slot of the table: mu protects its hash's entry. The
// legs' readers and the merges' offers take it.
type copySlot struct {
	mu sync.Mutex
	e  copyEntry
}

// copyEntry is one hash: how many times each leg read it, how many of
// those readings the merged stream delivered, and what its first
// arrival was, for a dropped copy to tell.
type copyEntry struct {
	key       xxh3.Uint128
	legs      [Max + 1]uint32
	delivered uint32
	many      bool   // it went to more than one merge: never dropped here
	m         *merge // the merge its first arrival went to; nil: none yet
	id        uint64 // its identity in m
	at        *topicPlace
	pos       uint64
	topic     string
}

// copyLeg is the frame a leg's reader read last, for the merge to tie
// to the message it offers (merge.offer, on the same reader; mu because
// a leg's supervisor offers the messages it fetched too).
type copyLeg struct {
	mu   sync.Mutex
	last copyKey
}

// copyKey is a frame's hash and the leg's readings of it, this one
// counted, and where the frame lies.
type copyKey struct {
	key    xxh3.Uint128
	slot   uint32 // key's slot
	n      uint32 // the leg's readings of key, this one counted
	lo, hi uintptr
	ok     bool
}

// newCopies returns the fast path of a Standby of legs on dialect p, or
// nil when p's notifications cannot be told apart by their bytes.
func newCopies(p protocol.Protocol, legs int) *copies {
	cp := p.Venue().Messages
	if cp == nil {
		return nil
	}
	return &copies{proto: cp, slots: make([]copySlot, copySlots), legs: make([]copyLeg, legs)}
}

// option installs leg's filter on its client (client.WithCopyFilter);
// none without a fast path.
func (c *copies) option(leg int) []client.Option {
	if c == nil {
		return nil
	}
	return []client.Option{client.WithCopyFilter(func(frame []byte, now time.Time) (client.Copy, bool) {
		return c.read(leg, frame, now)
	})}
}

// read counts frame's reading by leg and reports whether it is a copy of
// one delivered, moving the merge on past it (see above). Runs on leg's
// reader.
func (c *copies) read(leg int, frame []byte, now time.Time) (client.Copy, bool) {
	l := &c.legs[leg]
	b, ok := c.proto.CopyBytes(frame)
	if !ok {
		l.set(copyKey{})
		return client.Copy{}, false
	}
	key := xxh3.Hash128(b)
	i := uint32(key.Lo) & (copySlots - 1)
	sl := &c.slots[i]
	sl.mu.Lock()
	e := &sl.e
	if e.key != key { // a new hash, or one whose slot another took
		*e = copyEntry{key: key}
	}
	e.legs[leg]++
	n := e.legs[leg]
	m := e.m
	drop := m != nil && !e.many && n <= e.delivered
	id, at, pos, topic := e.id, e.at, e.pos, e.topic
	sl.mu.Unlock()
	if !drop || m.legs[leg].rejoin.Load() {
		lo := uintptr(unsafe.Pointer(unsafe.SliceData(frame)))
		l.set(copyKey{key: key, slot: i, n: n, lo: lo, hi: lo + uintptr(len(frame)), ok: true})
		return client.Copy{}, false
	}
	l.set(copyKey{})
	m.lastAt[leg].Store(now.UnixNano())
	if at != nil {
		at.reached(leg, pos)
	}
	m.dropped(leg, id)
	return client.Copy{Topic: topic, Place: pos, Placed: at != nil}, true
}

// current returns the key of leg's last frame when data (an offered
// message's) lies in it: the message is that frame's.
func (c *copies) current(leg int, data []byte) (copyKey, bool) {
	if c == nil || len(data) == 0 {
		return copyKey{}, false
	}
	l := &c.legs[leg]
	l.mu.Lock()
	k := l.last
	l.mu.Unlock()
	p := uintptr(unsafe.Pointer(unsafe.SliceData(data)))
	return k, k.ok && p >= k.lo && p+uintptr(len(data)) <= k.hi
}

// set records k as the leg's last frame.
func (l *copyLeg) set(k copyKey) {
	l.mu.Lock()
	l.last = k
	l.mu.Unlock()
}

// offered records that key's reading went to m; delivered (with its
// identity id and place at in m) that m delivered it, so that other legs'
// copies of it are dropped. Called with m.mu held.
func (c *copies) offered(k copyKey, m *merge, delivered bool, topic string, id uint64, at placed) {
	sl := &c.slots[k.slot]
	sl.mu.Lock()
	defer sl.mu.Unlock()
	e := &sl.e
	if e.key != k.key {
		return // forgotten meanwhile: another hash took the slot
	}
	switch {
	case e.m == nil:
		e.m, e.id, e.at, e.pos, e.topic = m, id, at.at, at.pos, topic
	case e.m != m:
		e.many = true
	}
	if delivered {
		e.delivered = max(e.delivered, k.n)
	}
}
