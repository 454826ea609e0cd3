package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"sync"
	"time"

	"go.uber.org/zap"
)

// Taking the preferred endpoint back, make before break. A Client whose
// connection failed over to another endpoint (WithEndpoints) probes its
// first endpoint (WithSwitchBack); once that has answered every probe
// for a while, the supervisor opens a connection to it, logs it in and
// subscribes every topic there while the old connection still delivers,
// hands the new one out, and closes the old one only once each topic's
// two streams have met: nothing is lost and nothing is delivered twice.
//
// Where the streams meet. From the moment the new connection subscribes,
// each topic's messages come on both: the old connection's are delivered
// as before, and their identities noted (the venue's documented fields,
// protocol.MessageReader.AppendIdentity, else the whole payload); the new connection's are
// held. The first message seen on both is the seam: from there on only
// the new connection delivers the topic, its held messages past the seam
// first. The old connection stays until every topic's streams have met:
// a topic with no message yet on either may have one on its way on the
// old connection that the new one, subscribed too late, never gets. A
// topic quiet throughout the hold has nothing to lose: at its end its
// held messages, if any, are delivered, and the topic is the new
// connection's from then on. While the handover runs, both readers
// deliver under one lock, so a topic's messages keep their order.

// handoverHold bounds the overlap: how long the old connection stays
// once the new one is handed out, waiting for every topic's streams to
// meet; and how many messages a topic holds from the new one meanwhile.
const (
	handoverHold  = 2 * time.Second
	handoverLimit = 4096
)

// handover is the state of one switch-back, shared by both connections'
// readers (offer) and the supervisor (takeBack).
type handover struct {
	c        *Client
	old, new *conn

	// topics are the topics the new connection subscribed, fixed before
	// it did: only theirs are checked, and each must meet (or the hold
	// end) before the old connection closes. A topic subscribed after
	// the new connection was handed out comes on it alone.
	topics map[*topicState]bool

	mu       sync.Mutex // orders every delivery of both readers while the handover runs
	seams    map[*topicState]*seam
	finished bool        // the old connection delivers nothing more
	ids      *Identifier // under mu
}

// seam is one topic's overlap.
type seam struct {
	met  bool           // only the new connection delivers the topic
	seen map[uint64]int // identities the old connection delivered since the handover began, counted
	held []seamMessage  // the new connection's messages, not yet known to be past the old one's
	// last is the identity of the old connection's last delivery, and
	// past says the new connection has passed it: only then may the
	// handover end, the new connection's messages then passing unchecked.
	last uint64
	past bool
}

// seamMessage is one message of the new connection, held.
type seamMessage struct {
	id       uint64
	data     []byte // a copy: the reader's buffers are not kept
	snapshot bool
	at       time.Time
	stamps   stamps
}

func newHandover(c *Client, old, nc *conn, topics []*topicState) *handover {
	h := &handover{c: c, old: old, new: nc, seams: make(map[*topicState]*seam), topics: make(map[*topicState]bool, len(topics))}
	for _, ts := range topics {
		h.topics[ts] = true
	}
	h.ids = NewIdentifier(c.proto, maphash.MakeSeed())
	return h
}

// offer takes a notification of ts from cn, one of the two connections,
// on cn's reader: it is delivered, held, or dropped as delivered already.
//
// The streams meet at the first message both carry. When the old
// connection is behind, that is a message the new one holds: the old
// one delivers it, the new one's held messages after it follow, and the
// old one delivers nothing more. When the new connection is behind, it
// is a message the old one delivered: the old one delivers nothing more,
// and the new one skips what the old one delivered (each delivery of an
// identity skips one arrival of it) and delivers the rest, which
// continue the old one's stream.
func (h *handover) offer(cn *conn, ts *topicState, data []byte, snapshot bool, now time.Time, st stamps) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.topics[ts] {
		// Subscribed after the new connection was handed out, on it alone:
		// what the old one brings under the same key is an older
		// subscription's, left there.
		if cn == h.new {
			cn.deliver(ts, data, snapshot, now, st)
		}
		return
	}
	s := h.seams[ts]
	if s == nil {
		s = &seam{seen: make(map[uint64]int)}
		h.seams[ts] = s
	}
	switch {
	case cn == h.old && (h.finished || s.met):
		// The new connection carries the topic now.
	case cn == h.old:
		id := h.ids.Of(ts.name, data)
		cn.deliver(ts, data, snapshot, now, st)
		if i := s.heldIndex(id); i >= 0 { // the old connection was behind
			h.meet(s, ts, i+1)
			return
		}
		if len(s.seen) < handoverLimit {
			s.seen[id]++
		}
		s.last = id
	default: // the new connection
		id := h.ids.Of(ts.name, data)
		if n := s.seen[id]; n > 0 { // delivered by the old connection
			s.seen[id] = n - 1
			if !s.met {
				s.met, s.held = true, nil // the new connection was behind: it carries on from here
			}
			s.past = s.past || id == s.last
			return
		}
		if s.met {
			cn.deliver(ts, data, snapshot, now, st)
			return
		}
		if len(s.held) >= handoverLimit { // the old connection fell that far behind
			h.meet(s, ts, 0)
			ts.resumed.Store(true) // the next message says what may be missing
			cn.deliver(ts, data, snapshot, now, st)
			return
		}
		s.held = append(s.held, seamMessage{id: id, data: bytes.Clone(data), snapshot: snapshot, at: now, stamps: st})
	}
}

// heldIndex is the index of the held message with identity id, or -1.
func (s *seam) heldIndex(id uint64) int {
	for i, m := range s.held {
		if m.id == id {
			return i
		}
	}
	return -1
}

// meet hands ts to the new connection, the old one being behind: its
// held messages from index from on are delivered, the ones before were
// delivered by the old connection. Called with h.mu held.
func (h *handover) meet(s *seam, ts *topicState, from int) {
	for _, m := range s.held[from:] {
		h.new.deliver(ts, m.data, m.snapshot, m.at, m.stamps)
	}
	s.met, s.held, s.past = true, nil, true
	clear(s.seen) // the old connection delivered nothing the new one will bring
}

// allMet reports whether every topic of the handover is carried by the
// new connection alone, past the old one's last delivery. A topic that
// had no message yet on either connection has not met: the old one may
// still have some on the way, which the new one never gets (a first
// version ended the overlap before any message came, and lost the one
// the old connection was still reading).
func (h *handover) allMet() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for ts := range h.topics {
		if ts.subs.Load() == nil {
			continue // left meanwhile: nothing to deliver
		}
		if s := h.seams[ts]; s == nil || !s.met || !s.past {
			return false
		}
	}
	return true
}

// finish ends the overlap: the old connection delivers nothing more, and
// each topic whose streams never met gets its held messages: all new,
// when the old connection delivered nothing of the topic meanwhile;
// after a possible hole otherwise (the old connection failed, or the
// streams did not meet in time), which the first of them says
// (FlagReconnected). A topic quiet throughout the hold is the new
// connection's from its first message.
func (h *handover) finish(oldFailed bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.finished = true
	for ts := range h.topics {
		if h.seams[ts] == nil {
			h.seams[ts] = &seam{met: true, past: true}
		}
	}
	for ts, s := range h.seams {
		switch {
		case s.met:
		case len(s.held) == 0:
			// Only the old connection had messages: the new one, behind,
			// skips them when they come (offer).
			s.met = true
		default:
			if oldFailed || len(s.seen) > 0 {
				ts.resumed.Store(true)
			}
			h.meet(s, ts, 0)
		}
	}
}

// errTakenBack ends the connection a Client left for its preferred
// endpoint, once the new one carries every topic.
var errTakenBack = errors.New("wsfan: left for the preferred endpoint")

// errKeyTaken refuses a routing key the new connection's server
// assigned that the old connection's routes already (two servers that
// number subscriptions alike): the handover is called off.
var errKeyTaken = errors.New("wsfan: subscription id in use on the other connection")

// handoverDrain bounds how long, once the old connection is closed, a new
// connection that was behind it is still checked against what the old
// one delivered.
const handoverDrain = 10 * time.Second

// takeBack moves the client from old, a connection to another endpoint,
// to its first endpoint, make before break. It returns the connection
// handed out: the new one, or old when the handover did not happen (a
// subscribe or unsubscribe was running, the endpoint did not take a
// connection, a topic or a subscription id was refused there, a session
// setting holds), in which case old carries on untouched. Runs on the
// supervisor goroutine.
func (c *Client) takeBack(old *conn) *conn {
	if c.settingHolds() {
		return old
	}
	ctx, cancel := c.withTimeout(c.ctx)
	defer cancel()
	nc, err := c.dialEndpoint(ctx, 0)
	if err == nil {
		// The on-connect hook may subscribe: it runs before handoverMu
		// is taken.
		if err = c.prepare(ctx, nc); err != nil {
			nc.fail(err)
			nc.wait()
		}
	}
	if err != nil {
		c.log.Info("the preferred endpoint answers probes but did not take a connection", zap.Error(err))
		return old
	}
	if !c.handoverMu.TryLock() {
		nc.fail(errTakenBack)
		nc.wait()
		return old // a subscribe or unsubscribe is running: the next probe
	}
	topics := c.confirmedTopics()
	h := newHandover(c, old, nc, topics)
	c.handover.Store(h)
	err = c.subscribeAll(ctx, nc, topics)
	if err == nil && c.settingHolds() { // made meanwhile, on old
		err = errors.New("a session setting was made meanwhile")
	}
	if err != nil {
		nc.fail(err) // first: nc delivers nothing more
		nc.wait()
		c.forgetKeys(&c.newKeys)
		c.handover.Store(nil) // old delivered every message itself
		c.handoverMu.Unlock()
		c.log.Info("not taking the preferred endpoint back", zap.Error(err))
		return old
	}
	c.mu.Lock()
	c.current.Store(0)
	c.conn.Store(nc)
	c.connSet.notify()
	c.mu.Unlock()
	// Subscribes and unsubscribes go to nc from here on. (Not held
	// longer: a consumer under Block may need to subscribe before it reads
	// what a reader waits to deliver.)
	c.handoverMu.Unlock()
	c.log.Info("took the preferred endpoint back", zap.String("endpoint", c.eps[0].shown))
	c.emit(Event{Kind: SwitchedBack, Endpoint: c.shownIndex(0)})

	// The old connection stays until every topic's streams have met, and
	// until the calls it carries are answered (an order must not be cut
	// off), each within its bound.
	deadline := time.Now().Add(handoverHold)
	for time.Now().Before(deadline) && !h.allMet() && !old.failed() && !nc.failed() {
		c.sleep(5 * time.Millisecond)
	}
	callsDue := time.Now().Add(c.cfg.requestTimeout)
	for old.pending.len() > 0 && time.Now().Before(callsDue) && !old.failed() {
		c.sleep(5 * time.Millisecond)
	}
	h.finish(old.failed())
	old.fail(errTakenBack)
	old.wait()
	// A new connection behind the old one still brings what the old one
	// delivered: it is skipped until the new one is past it.
	deadline = time.Now().Add(handoverDrain)
	for time.Now().Before(deadline) && !h.allMet() && !nc.failed() {
		c.sleep(5 * time.Millisecond)
	}
	c.handover.Store(nil)
	c.forgetKeys(&c.oldKeys)
	return nc
}

// settingHolds reports whether a session setting holds on the live
// connection, which closing it would set off (cancel-on-disconnect
// cancels the orders it placed).
func (c *Client) settingHolds() bool {
	if len(c.settings.snapshot()) == 0 {
		return false
	}
	c.log.Info("not taking the preferred endpoint back: a session setting holds on this connection")
	return true
}

// confirmedTopics are the topics held and acknowledged: what a handover
// subscribes on the new connection.
func (c *Client) confirmedTopics() []*topicState {
	c.mu.Lock()
	defer c.mu.Unlock()
	var states []*topicState
	for _, ts := range c.topics.all() {
		if ts.confirmed {
			states = append(states, ts)
		}
	}
	return states
}

// subscribeAll subscribes states, every confirmed topic, on cn and gives
// each the routing key cn's server assigned. A topic refused, a key in use, or any
// failure fails the whole: nothing is changed then, the old connection
// carrying every topic still.
func (c *Client) subscribeAll(ctx context.Context, cn *conn, states []*topicState) error {
	if len(states) == 0 {
		return nil
	}
	if err := paceErr(ctx, c.cfg.pace.WaitSubscribe(ctx, c.ctx)); err != nil {
		return err
	}
	c.mu.Lock()
	ops, err := c.sendSubscribeLocked(cn, states, &opRound{prepaid: 1})
	c.mu.Unlock()
	if err != nil {
		return err
	}
	c.awaitOps(ctx, cn, ops)
	var failed error
	for _, op := range ops {
		for j, k := range op.keys {
			if op.req.Topics[j].Key == "" && k != "" && op.err == nil {
				c.newKeys = append(c.newKeys, routedKey{k, op.states[j]})
			}
			if k == "" && op.err == nil && failed == nil {
				failed = fmt.Errorf("%w: %s", ErrRefused, op.req.Topics[j].Name)
			}
		}
		if op.err != nil && failed == nil {
			failed = op.err
		}
	}
	if failed != nil {
		return failed
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, nk := range c.newKeys { // assigned by cn's server, routed already (ops.go)
		c.oldKeys = append(c.oldKeys, routedKey{nk.ts.key, nk.ts})
		nk.ts.key = nk.key
	}
	c.newKeys = nil
	return nil
}

// routedKey is a routing key a server assigned, and its topic.
type routedKey struct {
	key string
	ts  *topicState
}

// forgetKeys drops the routes of keys, routing keys a server assigned
// on a connection left behind (an Ethereum node's subscription ids): the
// old connection's once the new one carries the topics, or the new
// one's when it was given up on; a key that routes to another topic
// stays. Runs on the supervisor goroutine.
func (c *Client) forgetKeys(keys *[]routedKey) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, rk := range *keys {
		c.topics.dropRouteOf(rk.key, rk.ts)
	}
	*keys = nil
}
