package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"time"

	"go.uber.org/zap"

	"github.com/wsfan/wsfan/internal/arbiter"
)

// Taking the preferred endpoint back, make before break. A Client whose
// connection failed over to another endpoint (WithEndpoints) probes its
// first endpoint (WithSwitchBack); once that has answered every probe
// for a while, the supervisor opens a connection to it, logs it in and
// subscribes every topic there while the old connection still delivers,
// hands the new one out, and closes the old one only once each topic's
// two streams have met: nothing is lost and nothing is delivered twice.
//
// Where the streams meet is an arbiter.Seam's decision (internal/arbiter,
// shared with a standby's merge): the old connection's messages are
// delivered and their identities noted (the venue's documented fields,
// protocol.MessageReader, else the whole payload), the new one's held
// until the two streams meet. The old connection stays until every
// topic's streams have met, or the hold ends.

// handoverHold bounds the overlap: how long the old connection stays
// once the new one is handed out, waiting for every topic's streams to
// meet; and how many messages a topic holds from the new one meanwhile.
const (
	handoverHold  = 2 * time.Second
	handoverLimit = 4096
)

// handover is one switch-back, shared by both connections' readers
// (offer) and the supervisor (takeBack).
type handover struct {
	old, new *conn
	seam     *arbiter.Seam[*topicState, seamMessage]
	ids      *Identifier // used under the seam's lock
}

// seamMessage is one notification of either connection, as offered.
type seamMessage struct {
	data     []byte
	snapshot bool
	at       time.Time
	stamps   stamps
}

func newHandover(c *Client, old, nc *conn, topics []*topicState) *handover {
	h := &handover{old: old, new: nc, ids: NewIdentifier(c.proto, maphash.MakeSeed())}
	h.seam = arbiter.NewSeam(topics, handoverLimit, arbiter.SeamOps[*topicState, seamMessage]{
		ID: func(ts *topicState, m seamMessage) uint64 { return h.ids.Of(ts.name, m.data) },
		Deliver: func(side arbiter.Side, ts *topicState, m seamMessage) {
			cn := h.old
			if side == arbiter.New {
				cn = h.new
			}
			cn.deliver(ts, m.data, m.snapshot, m.at, m.stamps)
		},
		Keep: func(m seamMessage) seamMessage {
			m.data = bytes.Clone(m.data)
			return m
		},
		Resumed: func(ts *topicState) { ts.resumed.Store(true) },
		Left:    func(ts *topicState) bool { return ts.subs.Load() == nil },
	})
	return h
}

// offer takes a notification of ts from cn, one of the two connections,
// on cn's reader: it is delivered, held, or dropped as delivered already
// (arbiter.Seam.Offer).
func (h *handover) offer(cn *conn, ts *topicState, data []byte, snapshot bool, now time.Time, st stamps) {
	side := arbiter.Old
	if cn == h.new {
		side = arbiter.New
	}
	h.seam.Offer(side, ts, seamMessage{data: data, snapshot: snapshot, at: now, stamps: st})
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
// setting holds), in which case old carries on untouched. The move is
// announced as an event of kind (SwitchedBack, Moved). Runs on the
// supervisor goroutine.
func (c *Client) takeBack(old *conn, kind EventKind) *conn {
	if c.settingHolds(old) {
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
	if err == nil && c.settingHolds(old) { // made meanwhile, on old
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
	c.eps.Use(0)
	c.conn.Store(nc)
	c.connSet.notify()
	c.mu.Unlock()
	// Subscribes and unsubscribes go to nc from here on. (Not held
	// longer: a consumer under Block may need to subscribe before it reads
	// what a reader waits to deliver.)
	c.handoverMu.Unlock()
	c.log.Info("took the preferred endpoint back", zap.String("endpoint", c.eps.Get(0).Shown))
	c.emit(Event{Kind: kind, Endpoint: c.eps.Shown(0)})

	// The old connection stays until every topic's streams have met, and
	// until the calls it carries are answered (an order must not be cut
	// off), each within its bound.
	deadline := time.Now().Add(handoverHold)
	for time.Now().Before(deadline) && !h.seam.AllMet() && !old.failed() && !nc.failed() {
		c.sleep(5 * time.Millisecond)
	}
	callsDue := time.Now().Add(c.cfg.requestTimeout)
	for old.pending.Len() > 0 && time.Now().Before(callsDue) && !old.failed() {
		c.sleep(5 * time.Millisecond)
	}
	h.seam.Finish(old.failed())
	old.fail(errTakenBack)
	old.wait()
	// A new connection behind the old one still brings what the old one
	// delivered: it is skipped until the new one is past it.
	deadline = time.Now().Add(handoverDrain)
	for time.Now().Before(deadline) && !h.seam.AllMet() && !nc.failed() {
		c.sleep(5 * time.Millisecond)
	}
	c.handover.Store(nil)
	c.forgetKeys(&c.oldKeys)
	return nc
}

// settingHolds reports whether a session setting holds on cn, the live
// connection, which closing it would set off (cancel-on-disconnect
// cancels the orders it placed): made by the program, made again after
// a reconnect, or made by the on-connect hook.
func (c *Client) settingHolds(cn *conn) bool {
	if !cn.settings.holds() {
		return false
	}
	c.log.Info("not leaving the connection: a session setting holds on it")
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
