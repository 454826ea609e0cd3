package standby

import (
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/gorilla/websocket"
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
// and its identity count (merge.go's window) on the leg's next offer, or
// after copyFold copies or more, under the lock. A leg rejoining after a
// hole drops nothing here: its copies tell the merge where it stands.
// What this does not match (a copy ahead of its first arrival's delivery,
// a frame of another layout, a conflated channel cut differently on each
// connection, a hash forgotten) goes on to the identity merge, which
// stays the safety net. Answers are never hashed (CopyBytes refuses
// them).
//
// The hashes are kept in a ring, in the order they were first read, and
// found again through an index of their low bits (with half of each hash
// beside its position, so that a new hash seldom looks in the ring at
// all). A trailing leg reads the stream in the order the leading one did,
// so its next copy is almost always the entry after its last: the ring is
// read front to back, a cache line after the other, where a table laid
// out by hash cost each reading a miss of the cache. Each entry has its
// own lock, held for a few loads and stores (no map, no allocation), and
// no pointer: where its first arrival went (its merge, topic and place)
// is a number into a small table of origins, one for each topic of a
// merge, so that the collector never scans the ring's megabytes (under
// BenchmarkStandbyBlast's blast it did, some two dozen times a second). An
// entry is forgotten, with its counts, when the ring comes round to it
// again (copyRing readings later): a forgotten hash's next reading is a
// first arrival, which the identity merge judges. copyRing is far more
// than two legs are apart in messages at a venue's pace, and covers a leg
// stalled under a blast on a busy machine (the two sockets' buffers hold
// 10 MB or more: 16,384 entries let 15-43 % of the second copies through
// to the merge at BenchmarkStandbyBlast's blast, 32,768 none; about 4 MB,
// the index included); a leg further behind (back from a long hole) has
// its copies judged by the identity merge and the place rule instead.

const (
	copyRing  = 1 << 15 // entries of the ring: a power of two
	copyIndex = 1 << 16 // slots of the index: a power of two, over copyRing
	// A leg's dropped copies are counted under the merge's lock once
	// copyFold of them wait, when the lock is free; once copyFoldMax
	// wait, at once (merge.dropped).
	copyFold    = 64
	copyFoldMax = 1024
	// raceWait is how long a leg's reader waits for another leg to
	// deliver a frame both read at once (see inFlight): less than a
	// frame's trip through the merge would cost, and it leaves the leg
	// that much behind, where its copies are dropped.
	raceWait = 50 * time.Microsecond
)

// copies is a Standby's fast path: the hashes its legs read, and each
// leg's last frame.
type copies struct {
	proto protocol.MessageReader
	ring  []copySlot      // copyRing of them; the p-th hash first read is at p mod copyRing
	index []atomic.Uint32 // copyIndex of them: a hash's low bits → its indexEntry; 0: none
	head  atomic.Uint64   // the ring positions given out
	legs  []copyLeg       // legs[i] is leg i's

	// origins[i] is the origin an entry's from names (i+1), nil once
	// its merge ended; the legs' readers load the table, grown by a
	// new one. omu serializes the merges that change it, and protects
	// the following.
	origins atomic.Pointer[[]atomic.Pointer[origin]]
	omu     sync.Mutex
	used    uint32   // origins' numbers given out, free ones included
	free    []uint32 // numbers given back (release), to give out again
	gen     uint32   // origins made
}

// origin is a topic of a merge, where first arrivals went: a ring entry
// names it by its number (ref+1) and generation, which a number given
// out again does not share. Made once a merge offers the topic's first
// message with its frame's hash (merge.originOf); never changed.
type origin struct {
	m     *merge
	place *topicPlace // nil: the topic is not placed
	topic string
	ref   uint32
	gen   uint32
}

// copySlot is an entry of the ring: mu protects it. The legs' readers
// and the merges' offers take it.
type copySlot struct {
	mu sync.Mutex
	e  copyEntry
}

// copyEntry is one hash: how many times each leg read it, how many of
// those readings the merged stream delivered, and what its first
// arrival was, for a dropped copy to tell. It holds no pointer (see
// above).
type copyEntry struct {
	key       xxh3.Uint128
	at        uint64 // its ring position
	id        uint64 // its identity in its origin's merge
	pos       uint64 // its place in its origin's topic, when placed
	legs      [Max + 1]uint32
	delivered uint32
	offered   uint32 // the readings offered to a merge, delivered or not
	from      uint32 // the origin its first arrival went to, its number plus one; 0: none yet
	fromGen   uint32 // that origin's generation
	placed    bool   // pos is its place (its origin's topic is placed, and the message told it)
	many      bool   // it went to more than one merge: never dropped here
}

// copyLeg is the frame a leg's reader read last, for the merge to tie
// to the message it offers (merge.offer, on the same reader; mu because
// a leg's supervisor offers the messages it fetched too).
type copyLeg struct {
	mu   sync.Mutex
	last copyKey
	// next is the ring position after the entry of the leg's last
	// hash, where its next one most likely is. Owned by its reader.
	next uint64
	// trailing: the last notification the leg hashed was a copy dropped
	// (trail.go). Written by the leg's reader, read by the others'.
	trailing atomic.Bool
	// waiting reports whether a call waits on the leg for its answer
	// (client.Leg.Waiting), once the leg is dialled: the pause asks it
	// (trail.go).
	waiting atomic.Pointer[func() bool]
}

// copyKey is a frame's hash and the leg's readings of it, this one
// counted, and where the frame lies.
type copyKey struct {
	key    xxh3.Uint128
	at     uint64 // key's ring position
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
	c := &copies{proto: cp, ring: make([]copySlot, copyRing), index: make([]atomic.Uint32, copyIndex), legs: make([]copyLeg, legs)}
	c.origins.Store(new([]atomic.Pointer[origin]))
	return c
}

// option installs leg's filter on its client (client.WithCopyFilter),
// and dialer, the one the caller's options give, with the leg's socket
// read as a trailing leg's (trail.go); none without a fast path.
func (c *copies) option(leg int, dialer websocket.Dialer) []client.Option {
	if c == nil {
		return nil
	}
	return []client.Option{
		client.WithCopyFilter(func(frame []byte, now time.Time) (client.Copy, bool) {
			return c.read(leg, frame, now)
		}),
		client.WithDialer(c.trailDialer(leg, dialer)),
	}
}

// read counts frame's reading by leg and reports whether it is a copy of
// one delivered, moving the merge on past it (see above). A frame another
// leg read first and is still taking to the merge is waited for, once,
// raceWait. Runs on leg's reader.
func (c *copies) read(leg int, frame []byte, now time.Time) (client.Copy, bool) {
	l := &c.legs[leg]
	b, ok := c.proto.CopyBytes(frame)
	if !ok {
		l.set(copyKey{})
		return client.Copy{}, false
	}
	key := xxh3.Hash128(b)
	sl := c.find(l, key)
	e := &sl.e
	e.legs[leg]++
	n, at := e.legs[leg], e.at
	first, racing := c.first(e, n), e.inFlight(leg, n)
	sl.mu.Unlock()
	if racing {
		time.Sleep(raceWait)
		sl.mu.Lock()
		if e.key == key && e.at == at {
			first = c.first(e, n)
		}
		sl.mu.Unlock()
	}
	m := first.m
	if m == nil || m.legs[leg].rejoin.Load() {
		l.trail(false)
		lo := uintptr(unsafe.Pointer(unsafe.SliceData(frame)))
		l.set(copyKey{key: key, at: at, n: n, lo: lo, hi: lo + uintptr(len(frame)), ok: true})
		return client.Copy{}, false
	}
	l.set(copyKey{})
	l.trail(true)
	m.lastAt[leg].Store(now.UnixNano())
	if first.place != nil {
		first.place.reached(leg, first.pos)
	}
	m.dropped(leg, first.id)
	return client.Copy{Topic: first.topic, Place: first.pos, Placed: first.place != nil}, true
}

// find returns the slot of key's entry, locked: the one after the entry
// of the leg's last hash (where a leg reading in the ring's order finds
// it), the one the index names, or else a new one at the ring's head,
// taking the place of the entry copyRing before it. Runs on l's reader.
//
// The leading leg's hashes are mostly new, and the index slot of a new
// hash names another's entry, or one forgotten: the index keeps half
// of each hash beside its position, so that find looks in the ring only
// for an entry that is there and likely the hash's (a look into the
// 4 MB ring misses the cache, and cost a first arrival ~180 ns at the
// blast).
func (c *copies) find(l *copyLeg, key xxh3.Uint128) *copySlot {
	// A leading leg past the last entry given out would only lock the
	// slot it is about to take; a trailing one reads no head, which the
	// leading one writes for every frame.
	if l.trailing.Load() || l.next < c.head.Load() {
		if sl := c.held(l.next, key); sl != nil {
			l.next++
			return sl
		}
	}
	ix := &c.index[key.Lo&(copyIndex-1)]
	if p, ok := indexed(ix.Load(), key, c.head.Load()); ok { // head after the entry: it is past the entry's position
		if sl := c.held(p, key); sl != nil {
			l.next = p + 1
			return sl
		}
	}
	p := c.head.Add(1) - 1
	sl := &c.ring[p&(copyRing-1)]
	sl.mu.Lock()
	sl.e = copyEntry{key: key, at: p}
	ix.Store(indexEntry(key, p))
	l.next = p + 1
	return sl
}

// indexEntry is the index's entry for key at ring position p: the top
// 16 bits of key.Hi, then p+1's low 16 bits (0 in both: none), 4 bytes,
// so that the index (256 KiB) stays in the cache more than it did at 8.
func indexEntry(key xxh3.Uint128, p uint64) uint32 {
	return uint32(key.Hi>>48)<<16 | uint32(uint16(p+1))
}

// indexed returns the ring position an index entry v names for key, with
// head the positions given out: ok when v is key's (its half of key.Hi
// matches) and the position is still in the ring. It is a hint: held
// checks the entry found there.
func indexed(v uint32, key xxh3.Uint128, head uint64) (uint64, bool) {
	if v == 0 || v>>16 != uint32(key.Hi>>48) {
		return 0, false
	}
	since := uint16(head) - uint16(v) // positions given out after it
	if since >= copyRing {
		return 0, false // forgotten: the ring came round to it
	}
	return head - uint64(since) - 1, true
}

// held returns the slot of ring position p, locked, when it holds key's
// entry; nil otherwise.
func (c *copies) held(p uint64, key xxh3.Uint128) *copySlot {
	sl := &c.ring[p&(copyRing-1)]
	sl.mu.Lock()
	if sl.e.key == key && sl.e.at == p {
		return sl
	}
	sl.mu.Unlock()
	return nil
}

// firstArrival is what a copy dropped tells of its first arrival: the
// merge that delivered it (nil: none did yet, or it may not be dropped),
// its identity there, and its place.
type firstArrival struct {
	m     *merge
	id    uint64
	place *topicPlace
	pos   uint64
	topic string
}

// first returns what the n-th reading of e's hash on a leg may be
// dropped as: the first arrival of the n-th, when the merged stream
// delivered it (and its merge has not ended since). Called with the
// slot's lock held.
func (c *copies) first(e *copyEntry, n uint32) firstArrival {
	if e.from == 0 || e.many || n > e.delivered {
		return firstArrival{}
	}
	o := c.origin(e.from, e.fromGen)
	if o == nil {
		return firstArrival{}
	}
	first := firstArrival{m: o.m, id: e.id, topic: o.topic}
	if e.placed {
		first.place, first.pos = o.place, e.pos
	}
	return first
}

// origin returns the origin numbered from (its ref plus one) of
// generation gen; nil when that one was given back (its merge ended).
// Safe from any goroutine.
func (c *copies) origin(from, gen uint32) *origin {
	tab := *c.origins.Load()
	if from == 0 || int(from) > len(tab) {
		return nil
	}
	if o := tab[from-1].Load(); o != nil && o.gen == gen {
		return o
	}
	return nil
}

// newOrigin returns a new origin of m's topic (placed at place; nil:
// not placed), numbered with a number given back or a new one.
func (c *copies) newOrigin(m *merge, place *topicPlace, topic string) *origin {
	c.omu.Lock()
	defer c.omu.Unlock()
	var ref uint32
	if n := len(c.free); n > 0 {
		ref, c.free = c.free[n-1], c.free[:n-1]
	} else {
		ref = c.used
		c.used++
	}
	tab := *c.origins.Load()
	if int(ref) >= len(tab) { // grown by a new table: readers holding the old one see no origin made since
		grown := make([]atomic.Pointer[origin], max(8, 2*len(tab)))
		for i := range tab {
			grown[i].Store(tab[i].Load())
		}
		c.origins.Store(&grown)
		tab = grown
	}
	c.gen++
	o := &origin{m: m, place: place, topic: topic, ref: ref, gen: c.gen}
	tab[ref].Store(o)
	return o
}

// releaseOrigin gives o's number back: the ring's entries that name o
// are dropped as copies no more, and a new origin takes the number (of
// another generation).
func (c *copies) releaseOrigin(o *origin) {
	c.omu.Lock()
	defer c.omu.Unlock()
	(*c.origins.Load())[o.ref].Store(nil)
	c.free = append(c.free, o.ref)
}

// inFlight reports whether another leg than leg has read the n-th reading
// of e's hash and not yet offered it to a merge: under way there, as two
// legs in step read one frame at once. Called with the slot's lock held.
func (e *copyEntry) inFlight(leg int, n uint32) bool {
	if e.offered >= n {
		return false
	}
	for j, r := range e.legs {
		if j != leg && r >= n {
			return true
		}
	}
	return false
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

// set records k as the leg's last frame. Runs on the leg's reader, the
// only writer of l.last, which reads it without the lock: a leg's copies
// one after another leave it unset, and take no lock here.
func (l *copyLeg) set(k copyKey) {
	if !k.ok && !l.last.ok {
		return
	}
	l.mu.Lock()
	l.last = k
	l.mu.Unlock()
}

// trail records whether the leg trails: written only when it changes,
// the other legs reading it (an atomic store is a locked instruction on
// amd64, for every frame).
func (l *copyLeg) trail(on bool) {
	if l.trailing.Load() != on {
		l.trailing.Store(on)
	}
}

// offered records that key's reading went to o, a merge's topic (nil:
// the merge ended); delivered (with its identity id and place at there)
// that the merge delivered it, so that other legs' copies of it are
// dropped. Called with the merge's mu held.
func (c *copies) offered(k copyKey, o *origin, delivered bool, id uint64, at placed) {
	sl := c.held(k.at, k.key)
	if sl == nil {
		return // forgotten meanwhile: the ring came round to it
	}
	defer sl.mu.Unlock()
	e := &sl.e
	switch {
	case o == nil:
	case e.from == 0:
		e.from, e.fromGen, e.id, e.pos, e.placed = o.ref+1, o.gen, id, at.pos, at.at != nil
	case e.from != o.ref+1 || e.fromGen != o.gen:
		e.many = true
	}
	e.offered = max(e.offered, k.n)
	if delivered {
		e.delivered = max(e.delivered, k.n)
	}
}
