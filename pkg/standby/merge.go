package standby

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wsfan/wsfan/internal/arbiter"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// Window is how many message identities a merged subscription of a
// Standby remembers, with how often each leg sent each (see Standby).
const Window = 1024

// The window counts each leg's sendings apart: Max standbys and the one
// in use fit in its sources.
var _ [arbiter.Sources - (Max + 1)]struct{}

// merge is a Standby subscription: one part on each leg, carrying the
// same topics, merged into one Subscription (out, client.NewMerge),
// attached to no topic itself. A part has no channel: its leg's reader
// offers each message to the merge (a sink, client.SinkTo), which
// delivers the first arrival of each into out; the legs' readers take
// turns on mu. A copy of a message delivered already is dropped on its
// leg's reader before it is classified, where the venue allows
// (copies.go): only first arrivals come here, and the lock is seldom
// wanted by two legs at once.
type merge struct {
	sb  *Standby
	out *client.Inlet

	// lastAt[i]: when leg i's last message here was read (UnixNano), or
	// the merge made; written by leg i's reader (a dropped copy's too),
	// read under mu.
	lastAt []atomic.Int64
	// drops[i] are the identities of leg i's copies dropped on its
	// reader, yet to be counted in seen (fold).
	drops []legDrops

	// mu serializes the legs' offers: it protects the following, and
	// orders out's deliveries. out.end never waits for it, so a delivery
	// waiting under Block is always released (end, Standby.Close).
	mu      sync.Mutex
	parts   []*client.Subscription // set once every leg subscribed; nil where a leg holds none
	alive   []bool                 // alive[i]: leg i's part is subscribed and has not ended
	seen    arbiter.Window
	legs    []rejoining // legs[i] is leg i's, while it rejoins after a hole
	ids     *client.Identifier
	places  map[string]*topicPlace // the placed topics (standbyorder.go), nil for none
	origins map[string]*origin     // its topics in the fast path (copies.go), made as their first keyed message comes; nil for none
	origin  *origin                // the one originOf returned last
	live    int                    // legs whose part has not ended
	lastErr error                  // why the last part to end ended
	ended   bool                   // ended: no hold's timer is set again
}

// RejoinHold is the longest a leg back from a hole holds its messages
// while another leg carried the stream through the hole (see
// merge.offer).
const RejoinHold = 500 * time.Millisecond

// rejoining is a leg back from a hole that another leg carried: its
// messages resume at the live stream, while the other leg's may still
// have older ones on their way, which must be delivered first. The leg's
// messages are held until the merged stream reaches one of them (the
// legs are then in step), or the other legs are no longer up, or
// RejoinHold passes; then those not delivered meanwhile are, in
// order.
type rejoining struct {
	on     bool
	rejoin atomic.Bool // on, for the leg's reader to read without mu (copies.go)
	held   []heldMessage
	timer  *time.Timer // releases held after RejoinHold
	gen    uint64      // counts releases: a timer of an earlier hold does nothing
	// filling: the leg's client fetches what its hole missed, which
	// another leg carried: until its first live message, what it fetched
	// is no hole of the merged stream's, and loses FlagBackfilled (as its
	// first message loses FlagReconnected). It outlasts on, which a
	// fetched message the stream has reached ends.
	filling bool
}

// heldMessage is a rejoining leg's message, its identity and which
// sending of it by the leg it was.
type heldMessage struct {
	id  uint64
	n   uint32
	at  placed
	msg client.Message
}

// newMerge returns the merge of a subscription to names (topics, parsed)
// under opts, whose parts are yet to be subscribed on each leg with its
// client.SinkTo.
func (sb *Standby) newMerge(names []string, topics []*protocol.Topic, opts []client.SubscribeOption) (*merge, error) {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	if sb.closed {
		return nil, client.ErrClosed
	}
	m := sb.mergeInto(topics)
	m.out = sb.legs[0].NewMerge(names, m, opts...)
	sb.merges[m] = struct{}{}
	return m, nil
}

// mergeInto returns the merge of topics, its out yet to be set (a test
// sets an Inlet of its own). It reads only what Dial set.
func (sb *Standby) mergeInto(topics []*protocol.Topic) *merge {
	n := len(sb.legs)
	m := &merge{sb: sb, seen: arbiter.NewWindow(Window), legs: make([]rejoining, n),
		alive: make([]bool, n), lastAt: make([]atomic.Int64, n), drops: make([]legDrops, n), live: n}
	now := time.Now().UnixNano()
	for i := range n {
		m.alive[i] = true
		m.lastAt[i].Store(now)
	}
	m.ids = client.NewIdentifier(sb.proto, sb.seed)
	m.places = newPlaces(sb.proto, topics)
	return m
}

// setParts records the parts once every leg subscribed (nil where one
// did not): end unsubscribes them. A merge that ended meanwhile (its
// consumer too slow under CloseSubscription) leaves them at once.
func (m *merge) setParts(ctx context.Context, parts []*client.Subscription) {
	m.mu.Lock()
	if m.ended {
		m.mu.Unlock()
		_ = unsubscribeParts(ctx, parts) // out has ended already, with its reason
		return
	}
	m.parts = parts
	for i, p := range parts {
		if p == nil && m.alive[i] {
			m.alive[i] = false // never subscribed: it will not end
			m.live--
		}
	}
	last, why := m.live <= 0, m.lastErr
	if last {
		m.stopLocked()
	}
	m.mu.Unlock()
	if last {
		m.finish(why)
	}
}

// partEnded counts the end of leg's part; the last one ends out with the
// last error a part ended with (none when the legs were closed).
func (m *merge) partEnded(leg int, err error) {
	m.mu.Lock()
	if !m.alive[leg] {
		m.mu.Unlock()
		return
	}
	m.alive[leg] = false
	m.live--
	if err != nil {
		m.lastErr = err
	}
	last, why := m.live == 0, m.lastErr
	if last {
		m.stopLocked()
	}
	m.mu.Unlock()
	if last {
		m.finish(why)
	}
}

// stopLocked marks the merge ended, stops its holds' timers and gives
// its origins back (copies.go): the legs' copies of what it delivered
// are dropped no more. Called with m.mu held.
func (m *merge) stopLocked() {
	m.ended = true
	for _, o := range m.origins {
		m.sb.copies.releaseOrigin(o)
	}
	m.origins, m.origin = nil, nil
	for i := range m.legs {
		if t := m.legs[i].timer; t != nil {
			t.Stop()
			m.legs[i].timer = nil
		}
	}
}

// finish ends out with err and forgets the merge. Called without m.mu.
func (m *merge) finish(err error) {
	m.out.End(err)
	m.sb.mu.Lock()
	delete(m.sb.merges, m)
	m.sb.mu.Unlock()
}

// covered reports whether another leg with a live part has been up since
// before leg's last message here, so it carried what leg missed: leg's
// hole is none of the merged stream's. Called with m.mu held.
func (m *merge) covered(leg int) bool {
	since := m.lastAt[leg].Load()
	for j, alive := range m.alive {
		if up := m.sb.health[j].upSince.Load(); j != leg && alive && up != 0 && up <= since {
			return true
		}
	}
	return false
}

// offer is offerAt of a message whose place its client did not read.
func (m *merge) offer(leg int, msg client.Message) { m.offerAt(leg, msg, 0) }

// offerAt delivers msg, leg's, into out if it is the first arrival: the
// leg has sent its identity more times than any leg had before. A leg's
// first message after a hole that another leg carried loses its
// reconnect flag, and the leg rejoins (see rejoining). place is msg's
// as the leg's client read it (client.Sink; 0: not read, placeOf reads
// it).
func (m *merge) offerAt(leg int, msg client.Message, place uint64) {
	// Under Block this reader may wait for the consumer (or for the other
	// leg's, waiting): the part's sink marked it (client.SinkTo).
	var key copyKey
	var keyed bool
	if msg.Flags&client.FlagBackfilled == 0 {
		// The frame's hash, when its copies may be dropped. A message the
		// leg's supervisor fetched lies in no frame the reader read: its
		// bytes, newly allocated, may even sit where the last frame's
		// lay once that was collected, which current would take for it.
		key, keyed = m.sb.copies.current(leg, msg.Data)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.fold(leg)
	id := m.ids.Of(msg.Topic, msg.Data)
	r := &m.legs[leg]
	fetched := msg.Flags&client.FlagBackfilled != 0
	if msg.Flags&client.FlagReconnected != 0 {
		r.filling = m.covered(leg)
		if r.filling {
			msg.Flags &^= client.FlagReconnected
			r.on = true
			r.rejoin.Store(true)
		}
	}
	if r.filling {
		r.filling = fetched
		msg.Flags &^= client.FlagBackfilled
	}
	m.lastAt[leg].Store(msg.RecvTime.UnixNano())
	at := m.placeOf(leg, msg, place)
	offered := func(delivered bool) { // other legs' copies of the frame are dropped once delivered
		if keyed {
			m.sb.copies.offered(key, m.originOf(msg.Topic), delivered, id, at)
		}
	}
	if fetched {
		if s := m.seen.Slot(id); s != nil && s.Sent[leg] > 0 {
			// The leg fetched a message it had sent already: back from
			// a hole, it read the live one first (dropped on its reader
			// as another leg's copy, copies.go, and counted), and its
			// client fetched it too. A fetch is no second sending: as
			// one, it was delivered twice.
			return
		}
	}
	if !r.on && m.behind(leg, at) {
		// The stream is past it (order.go): dropped before it takes a
		// slot of the window, so that a leg far behind, its old copies
		// coming one after another, never pushes out the identities of
		// the messages at the stream's head (a head at the last height
		// delivered is judged by its identity alone, and was delivered
		// twice once forgotten).
		offered(false)
		return
	}
	s := m.seen.Add(id, leg)
	n := s.Sent[leg]
	if r.on {
		switch {
		case n <= s.Delivered: // the merged stream has reached this leg's place
			m.release(leg)
			offered(false)
			return
		case !m.covered(leg): // no other leg carries the stream any more
			m.release(leg)
		default:
			m.hold(leg, heldMessage{id: id, n: n, at: at, msg: msg})
			offered(false)
			return
		}
	}
	if n <= s.Delivered || m.behind(leg, at) { // a copy, or (released meanwhile) the stream is past it
		offered(false)
		return
	}
	s.Delivered = n
	at.delivered()
	offered(true)
	m.out.Deliver(msg, 1)
	m.inStep(leg, id)
}

// originOf returns topic's origin in the fast path (copies.go), made
// the first time; nil once the merge ended. Called with m.mu held.
func (m *merge) originOf(topic string) *origin {
	if o := m.origin; o != nil && o.topic == topic {
		return o
	}
	if m.ended {
		return nil
	}
	o := m.origins[topic]
	if o == nil {
		if m.origins == nil {
			m.origins = make(map[string]*origin)
		}
		o = m.sb.copies.newOrigin(m, m.places[topic], topic)
		m.origins[topic] = o
	}
	m.origin = o
	return o
}

// legDrops are the identities of a leg's copies dropped on its reader
// (copies.go), not yet counted.
type legDrops struct {
	mu  sync.Mutex // the leg's reader appends, an offer for the leg folds
	ids []uint64
	// waiting is whether ids holds any, stored under mu when that
	// changes (an atomic store is a locked instruction on amd64): an
	// offer with none to fold (a leading leg's, each first arrival's)
	// takes no lock for them.
	waiting atomic.Bool
}

// dropped records that leg dropped a copy of the message of identity id
// on its reader. From copyFold of them on, they are counted when the
// merge's lock is free, from copyFoldMax on the leg waits for it: under
// a blast the leading leg's offers hold the lock most of the time, and
// a trailing leg that waited for it every copyFold copies spent more
// waiting than counting. Runs on leg's reader, without m.mu.
func (m *merge) dropped(leg int, id uint64) {
	d := &m.drops[leg]
	d.mu.Lock()
	d.ids = append(d.ids, id)
	n := len(d.ids)
	if n == 1 {
		d.waiting.Store(true)
	}
	d.mu.Unlock()
	switch {
	case n >= copyFoldMax:
		m.mu.Lock()
	case n >= copyFold && m.mu.TryLock():
	default:
		return
	}
	m.fold(leg)
	m.mu.Unlock()
}

// fold counts leg's dropped copies as its sendings of their identities,
// as an offer of each would have: only the leg's own offers read its
// counts, and each folds first. Called with m.mu held.
func (m *merge) fold(leg int) {
	d := &m.drops[leg]
	if !d.waiting.Load() { // one appended since is folded by the next offer, as under the lock
		return
	}
	d.mu.Lock()
	for _, id := range d.ids {
		if s := m.seen.Slot(id); s != nil {
			s.Sent[leg]++
		}
	}
	d.ids = d.ids[:0]
	d.waiting.Store(false)
	d.mu.Unlock()
}

// hold keeps a rejoining leg's message, and starts the timer that
// releases what it holds after RejoinHold. Called with m.mu held.
func (m *merge) hold(leg int, h heldMessage) {
	r := &m.legs[leg]
	r.held = append(r.held, h)
	if r.timer == nil && !m.ended {
		gen := r.gen
		r.timer = time.AfterFunc(RejoinHold, func() {
			m.mu.Lock()
			defer m.mu.Unlock()
			if m.legs[leg].gen == gen { // else released already, and maybe holding anew
				m.release(leg)
			}
		})
	}
}

// inStep releases the legs rejoining that hold id, just delivered by
// leg: the merged stream has reached their place, and what they hold
// after it is newer. Called with m.mu held.
func (m *merge) inStep(leg int, id uint64) {
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
// that no leg delivered meanwhile and the merged stream is not past.
// Called with m.mu held.
func (m *merge) release(leg int) {
	r := &m.legs[leg]
	if r.timer != nil {
		r.timer.Stop()
		r.timer = nil
	}
	for _, h := range r.held {
		if s := m.seen.Slot(h.id); s != nil {
			if h.n <= s.Delivered || m.behind(leg, h.at) {
				continue
			}
			s.Delivered = h.n
		} else if m.behind(leg, h.at) {
			continue
		}
		h.at.delivered()
		m.out.Deliver(h.msg, 1)
	}
	clear(r.held)
	r.held, r.on = r.held[:0], false
	r.rejoin.Store(false)
	r.gen++
}

// end ends out with err and unsubscribes the parts, each on its leg. It
// returns the first failure to unsubscribe. Safe from any goroutine,
// more than once.
func (m *merge) end(ctx context.Context, err error) error {
	m.out.End(err) // first: releases a delivery waiting under Block, which holds mu
	m.mu.Lock()
	m.stopLocked()
	parts := m.parts
	m.mu.Unlock()
	m.finish(err)
	return unsubscribeParts(ctx, parts)
}

// Leave is the consumer's Unsubscribe (client.Leaver).
func (m *merge) Leave(ctx context.Context) error { return m.end(ctx, nil) }

// LeaveAsync leaves the parts off the goroutine that ended out (a
// forwarder, under out's overflow policy), counted in the Standby's wg.
func (m *merge) LeaveAsync() {
	m.sb.wg.Add(1)
	go func() {
		defer m.sb.wg.Done()
		_ = m.end(m.sb.ctx, nil)
	}()
}

// unsubscribeParts unsubscribes each part (nil ones skipped) and returns
// the first failure; a part already ended is none.
func unsubscribeParts(ctx context.Context, parts []*client.Subscription) error {
	var first error
	for _, p := range parts {
		if p == nil {
			continue
		}
		if err := p.Unsubscribe(ctx); err != nil && !errors.Is(err, client.ErrUnsubscribed) && first == nil {
			first = err
		}
	}
	return first
}
