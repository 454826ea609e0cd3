package client

import (
	"context"
	"errors"
	"hash/maphash"
	"sync"
)

// StandbyWindow is how many message identities a merged subscription of
// a Standby remembers, with how often each leg sent each (see Standby).
const StandbyWindow = 1024

// partOptions are a merged subscription's parts': a part's full buffer
// holds its leg's reader (Block), so messages are dropped, if at all, by
// the merged subscription's own policy, in one place (as a Pool's parts).
var partOptions = []SubscribeOption{Buffer(partBuffer), Overflow(Block), PendingBytes(0)}

// standbyMerge is a Standby subscription: one part on each leg, carrying
// the same topics, merged into one Subscription (out), attached to no
// topic itself. One forwarder goroutine a part, counted in the Standby's
// wg, offers the part's messages; the first arrival of each is
// delivered.
type standbyMerge struct {
	sb    *Standby
	out   *Subscription
	parts []*Subscription // set before the forwarders start, then read-only; nil where a leg holds none

	// mu serializes the offers of the forwarders: it protects the
	// following, and orders out's deliveries.
	mu      sync.Mutex
	seen    identityWindow
	hash    maphash.Hash
	scratch []byte
	live    int   // parts whose forwarder has not ended
	lastErr error // why the last part to end ended
}

// merge starts the forwarders of parts, one a leg, into a new
// subscription to names under sc.
func (sb *Standby) merge(names []string, parts []*Subscription, sc subConfig) (*Subscription, error) {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	if sb.closed {
		return nil, ErrClosed
	}
	m := &standbyMerge{sb: sb, parts: parts, seen: newIdentityWindow(StandbyWindow)}
	m.hash.SetSeed(sb.seed)
	m.out = newSubscription(sb.legs[0], names, sc, channelSlots)
	m.out.merge = m
	for leg, part := range parts {
		if part == nil {
			continue
		}
		m.live++
		sb.wg.Add(1)
		go m.forward(leg, part)
	}
	return m.out, nil
}

// forward is a forwarder: it offers the part's messages in the part's
// order, and when the part ends, ends out if it was the last.
func (m *standbyMerge) forward(leg int, part *Subscription) {
	defer m.sb.wg.Done()
	for msg := range part.C() {
		m.offer(leg, msg)
	}
	err := <-part.Err()
	m.mu.Lock()
	m.live--
	if err != nil {
		m.lastErr = err
	}
	last, why := m.live == 0, m.lastErr
	m.mu.Unlock()
	if last {
		m.out.end(why)
	}
}

// offer delivers msg, leg's, into out if it is the first arrival: the
// leg has sent its identity more times than any leg had before. A
// reconnect's flag is dropped when another leg carried what this one
// missed.
func (m *standbyMerge) offer(leg int, msg Message) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.seen.count(m.identity(msg), leg) {
		return
	}
	if msg.Flags&FlagReconnected != 0 && m.sb.covered(leg) {
		msg.Flags &^= FlagReconnected
	}
	m.out.deliver(msg)
}

// identity hashes msg's topic and identity: the venue's documented
// fields, or the whole payload where it has none. Called with m.mu held.
func (m *standbyMerge) identity(msg Message) uint64 {
	m.hash.Reset()
	_, _ = m.hash.WriteString(msg.Topic)
	_ = m.hash.WriteByte(0)
	if m.sb.ident != nil {
		var ok bool
		if m.scratch, ok = m.sb.ident.AppendIdentity(m.scratch[:0], msg.Data); ok {
			_, _ = m.hash.Write(m.scratch)
			return m.hash.Sum64()
		}
	}
	_ = m.hash.WriteByte(1)
	_, _ = m.hash.Write(msg.Data)
	return m.hash.Sum64()
}

// end ends out with err and unsubscribes the parts, each on its leg. It
// returns the first failure to unsubscribe. Safe from any goroutine,
// more than once.
func (m *standbyMerge) end(ctx context.Context, err error) error {
	m.out.end(err)
	return unsubscribeParts(ctx, m.parts)
}

// endAsync leaves the parts off the goroutine that ended out (a
// forwarder, under out's overflow policy), counted in the Standby's wg.
func (m *standbyMerge) endAsync() {
	m.sb.wg.Add(1)
	go func() {
		defer m.sb.wg.Done()
		_ = m.end(m.sb.ctx, nil)
	}()
}

// unsubscribeParts unsubscribes each part (nil ones skipped) and returns
// the first failure; a part already ended is none.
func unsubscribeParts(ctx context.Context, parts []*Subscription) error {
	var first error
	for _, p := range parts {
		if p == nil {
			continue
		}
		if err := p.Unsubscribe(ctx); err != nil && !errors.Is(err, ErrUnsubscribed) && first == nil {
			first = err
		}
	}
	return first
}

// identityWindow counts, for the last n identities a merged subscription
// saw, how many times each leg sent each and how many times it was
// delivered. The oldest is forgotten first.
type identityWindow struct {
	index map[uint64]int32 // identity → its slot
	slots []identitySlot   // a ring, grown up to its capacity
	next  int              // the slot to reuse next, once the ring is full
}

// identitySlot is one identity's counts: delivered, and each leg's.
type identitySlot struct {
	id        uint64
	delivered uint16
	legs      [MaxStandby + 1]uint16
}

func newIdentityWindow(n int) identityWindow {
	return identityWindow{index: make(map[uint64]int32), slots: make([]identitySlot, 0, n)}
}

// count counts one more sending of id by leg and reports whether it is
// the first arrival of that sending: the leg has now sent id more times
// than it was delivered.
func (w *identityWindow) count(id uint64, leg int) bool {
	i, ok := w.index[id]
	if !ok {
		i = w.add(id)
	}
	s := &w.slots[i]
	s.legs[leg]++
	if s.legs[leg] <= s.delivered {
		return false
	}
	s.delivered = s.legs[leg]
	return true
}

// add gives id a slot, the oldest one's once the ring is full.
func (w *identityWindow) add(id uint64) int32 {
	if len(w.slots) < cap(w.slots) {
		w.slots = append(w.slots, identitySlot{id: id})
		i := int32(len(w.slots) - 1)
		w.index[id] = i
		return i
	}
	i := int32(w.next)
	delete(w.index, w.slots[i].id)
	w.slots[i] = identitySlot{id: id}
	w.index[id] = i
	w.next = (w.next + 1) % len(w.slots)
	return i
}
