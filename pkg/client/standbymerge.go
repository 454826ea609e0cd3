package client

import (
	"context"
	"errors"
	"hash/maphash"
	"sync"
	"time"
)

// StandbyWindow is how many message identities a merged subscription of
// a Standby remembers, with how often each leg sent each (see Standby).
const StandbyWindow = 1024

// standbyMerge is a Standby subscription: one part on each leg, carrying
// the same topics, merged into one Subscription (out), attached to no
// topic itself. A part has no channel: its leg's reader offers each
// message to the merge (a sink, sinkTo), which delivers the first
// arrival of each into out; the two legs' readers take turns on mu.
type standbyMerge struct {
	sb    *Standby
	out   *Subscription
	parts []*Subscription // set once every leg subscribed, under mu; nil where a leg holds none

	// mu serializes the offers of the forwarders: it protects the
	// following, and orders out's deliveries.
	mu      sync.Mutex
	seen    identityWindow
	legs    []rejoining // legs[i] is leg i's, while it rejoins after a hole
	hash    maphash.Hash
	scratch []byte
	live    int   // legs whose part has not ended
	lastErr error // why the last part to end ended
	ended   bool  // end ran: no hold's timer is set again
}

// StandbyRejoinHold is the longest a leg back from a hole holds its
// messages while another leg carried the stream through the hole (see
// standbyMerge.offer).
const StandbyRejoinHold = 500 * time.Millisecond

// rejoining is a leg back from a hole that another leg carried: its
// messages resume at the live stream, while the other leg's may still
// have older ones on their way, which must be delivered first. The leg's
// messages are held until the merged stream reaches one of them (the
// legs are then in step), or the other legs are no longer up, or
// StandbyRejoinHold passes; then those not delivered meanwhile are, in
// order.
type rejoining struct {
	on    bool
	held  []heldMessage
	timer *time.Timer // releases held after StandbyRejoinHold
}

// heldMessage is a rejoining leg's message, its identity and which
// sending of it by the leg it was.
type heldMessage struct {
	id  uint64
	n   uint32
	msg Message
}

// newMerge returns the merge of a subscription to names under sc, whose
// parts are yet to be subscribed on each leg with its sinkTo.
func (sb *Standby) newMerge(names []string, sc subConfig) (*standbyMerge, error) {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	if sb.closed {
		return nil, ErrClosed
	}
	m := &standbyMerge{sb: sb, seen: newIdentityWindow(StandbyWindow), legs: make([]rejoining, len(sb.legs)), live: len(sb.legs)}
	m.hash.SetSeed(sb.seed)
	m.out = newSubscription(sb.legs[0], names, sc, channelSlots)
	m.out.merge = m
	return m, nil
}

// setParts records the parts once every leg subscribed (nil where one
// did not): end unsubscribes them.
func (m *standbyMerge) setParts(parts []*Subscription) {
	m.mu.Lock()
	m.parts = parts
	for _, p := range parts {
		if p == nil {
			m.live-- // never subscribed: it will not end
		}
	}
	last := m.live <= 0
	m.mu.Unlock()
	if last {
		m.out.end(m.lastErr)
	}
}

// partEnded counts a part's end; the last one ends out with the last
// error a part ended with (none when the legs were closed).
func (m *standbyMerge) partEnded(err error) {
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
// leg has sent its identity more times than any leg had before. A leg's
// first message after a hole that another leg carried loses its
// reconnect flag, and the leg rejoins (see rejoining).
func (m *standbyMerge) offer(leg int, msg Message) {
	m.mu.Lock()
	defer m.mu.Unlock()
	id := m.identity(msg)
	s := m.seen.add(id, leg)
	n := s.legs[leg]
	r := &m.legs[leg]
	if msg.Flags&FlagReconnected != 0 && m.sb.covered(leg) {
		msg.Flags &^= FlagReconnected
		r.on = true
	}
	if r.on {
		switch {
		case n <= s.delivered: // the merged stream has reached this leg's place
			m.release(leg)
			return
		case !m.sb.covered(leg): // no other leg carries the stream any more
			m.release(leg)
		default:
			m.hold(leg, id, n, msg)
			return
		}
	}
	if n <= s.delivered {
		return
	}
	s.delivered = n
	m.out.deliver(msg)
	m.inStep(leg, id)
}

// hold keeps a rejoining leg's message, and starts the timer that
// releases what it holds after StandbyRejoinHold. Called with m.mu held.
func (m *standbyMerge) hold(leg int, id uint64, n uint32, msg Message) {
	r := &m.legs[leg]
	r.held = append(r.held, heldMessage{id: id, n: n, msg: msg})
	if r.timer == nil && !m.ended {
		r.timer = time.AfterFunc(StandbyRejoinHold, func() {
			m.mu.Lock()
			defer m.mu.Unlock()
			m.release(leg)
		})
	}
}

// inStep releases the legs rejoining that hold id, just delivered by
// leg: the merged stream has reached their place, and what they hold
// after it is newer. Called with m.mu held.
func (m *standbyMerge) inStep(leg int, id uint64) {
	for j := range m.legs {
		r := &m.legs[j]
		if j == leg || !r.on {
			continue
		}
		for _, h := range r.held {
			if h.id == id {
				m.release(j)
				break
			}
		}
	}
}

// release ends leg's rejoining: it delivers, in order, what the leg held
// that no leg delivered meanwhile. Called with m.mu held.
func (m *standbyMerge) release(leg int) {
	r := &m.legs[leg]
	if r.timer != nil {
		r.timer.Stop()
		r.timer = nil
	}
	for _, h := range r.held {
		if s := m.seen.slot(h.id); s != nil {
			if h.n <= s.delivered {
				continue
			}
			s.delivered = h.n
		}
		m.out.deliver(h.msg)
	}
	clear(r.held)
	r.held, r.on = r.held[:0], false
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
	m.mu.Lock()
	m.ended = true
	for i := range m.legs {
		if t := m.legs[i].timer; t != nil {
			t.Stop()
			m.legs[i].timer = nil
		}
	}
	parts := m.parts
	m.mu.Unlock()
	m.out.end(err)
	return unsubscribeParts(ctx, parts)
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
	delivered uint32
	legs      [MaxStandby + 1]uint32
}

func newIdentityWindow(n int) identityWindow {
	return identityWindow{index: make(map[uint64]int32), slots: make([]identitySlot, 0, n)}
}

// add counts one more sending of id by leg and returns id's slot, valid
// until the next add.
func (w *identityWindow) add(id uint64, leg int) *identitySlot {
	i, ok := w.index[id]
	if !ok {
		i = w.newSlot(id)
	}
	s := &w.slots[i]
	s.legs[leg]++
	return s
}

// slot returns id's slot, or nil once it is forgotten.
func (w *identityWindow) slot(id uint64) *identitySlot {
	if i, ok := w.index[id]; ok {
		return &w.slots[i]
	}
	return nil
}

// newSlot gives id a slot, the oldest one's once the ring is full.
func (w *identityWindow) newSlot(id uint64) int32 {
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
