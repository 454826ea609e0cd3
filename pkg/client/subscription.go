package client

import (
	"context"
	"iter"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wsfan/wsfan/internal/chanbytes"
	"github.com/wsfan/wsfan/internal/queue"
)

// Subscription is a stream of messages for one or more topics. Read them
// from C (or range over All); when the subscription ends, C is closed and
// Err yields the reason (nothing, for Unsubscribe and Close).
type Subscription struct {
	c      *Client
	topics []string
	ch     chan Message
	errc   chan error // capacity 1; closed when the subscription ends
	policy OverflowPolicy
	grace  time.Duration // how long a full buffer lends room (Grace)

	dropped atomic.Uint64

	// mu serializes delivery (reader goroutine) with ending (any
	// goroutine), so a message is never sent on a closed channel.
	mu    sync.Mutex
	seq   uint64 // frames received, delivered or dropped
	ended bool
	err   error // why it ended; written before ch and errc close
	// Owned by the reader goroutine, under mu.
	slow      bool      // in a slow-consumer episode: a drop since the consumer last caught up
	graceFrom time.Time // when the buffer was first found full since the consumer last caught up (zero: not since); see Grace

	// The buffer holds capacity messages: ch's slots (at most
	// channelSlots), then overflow, which grows only while the consumer
	// is behind, and which the mover goroutine (moveLoop) feeds into ch
	// in order. Under mu, but for hand.
	capacity      int
	pending       chanbytes.Counter    // bytes of data in ch (and in the mover's hand); limit 0 when unbounded
	overflow      queue.Queue[Message] // messages beyond ch's slots, oldest first
	overflowBytes uint64
	moving        bool        // the mover runs; it closes ch if the subscription ends meanwhile
	hand          atomic.Bool // the mover holds a message taken from overflow, on its way into ch

	quit    chan struct{} // closed first when ending: releases a Block-policy send
	endOnce sync.Once

	// states are the topics this subscription is attached to. c.mu
	// protects it; nil once detached.
	states []*topicState

	// sink and sinkEnd are set for a subscription whose messages go to a
	// function, not to ch (subConfig.sink); read-only.
	sink      Sink
	sinkEnd   func(part *Subscription, err error)
	sinkWaits bool

	// merge is set, before the subscription is shared, when it is fed
	// by other subscriptions, its parts, and attached to no topic itself
	// (NewMerge): a pool's spanning connections, a standby's legs.
	merge Leaver
}

// channelSlots is the most slots a subscription's channel has; the rest
// of its buffer (Buffer, per subscription or as Dial's default) is allocated only while its
// consumer is behind.
const channelSlots = 64

// newSubscription makes a subscription whose channel has at most
// maxSlots slots (channelSlots, or inletSlots for an Inlet's).
func newSubscription(c *Client, topics []string, sc subConfig, maxSlots int) *Subscription {
	slots := min(sc.buffer, maxSlots)
	return &Subscription{
		c:        c,
		topics:   topics,
		ch:       make(chan Message, slots),
		errc:     make(chan error, 1),
		policy:   sc.overflow,
		grace:    sc.grace,
		capacity: sc.buffer,
		// The ring covers ch's slots and the mover's hand.
		pending:   chanbytes.New(slots+1, sc.pendingBytes),
		quit:      make(chan struct{}),
		sink:      sc.sink,
		sinkEnd:   sc.sinkEnd,
		sinkWaits: sc.sinkWaits,
	}
}

// C returns the channel messages arrive on, in the order the server sent
// them. It is closed when the subscription ends, and then still holds
// what it held. Its capacity is at most 64: the rest of the
// subscription's buffer is held beside it, and allocated, only while the
// consumer is behind; when the subscription ends, what waits there and
// does not fit in C is dropped (counted in Dropped).
func (s *Subscription) C() <-chan Message { return s.ch }

// Err returns a channel that yields why the subscription ended (a refused
// topic after a reconnect, ErrSlowConsumer, a lost connection that could
// not be restored) and is then closed; it is closed without a value after
// Unsubscribe or Close.
func (s *Subscription) Err() <-chan error { return s.errc }

// All iterates over the subscription's messages until it ends; when it
// ended with an error, that error is the last value yielded, with a zero
// Message, whether or not Err was read. Breaking out of the loop leaves
// the subscription running. All reads C: use one or the other.
//
//	for m, err := range sub.All() {
//		if err != nil { return err }
//		...
//	}
func (s *Subscription) All() iter.Seq2[Message, error] {
	return func(yield func(Message, error) bool) {
		for m := range s.ch {
			if !yield(m, nil) {
				return
			}
		}
		if s.err != nil { // written before ch was closed
			yield(Message{}, s.err)
		}
	}
}

// Dropped returns how many messages were dropped: by the overflow
// policy, and, when the subscription ended, those that waited beside C
// (see C).
func (s *Subscription) Dropped() uint64 { return s.dropped.Load() }

// Topics returns the subscription's topics.
func (s *Subscription) Topics() []string { return append([]string(nil), s.topics...) }

// Unsubscribe ends the subscription. Topics no other subscription uses
// are unsubscribed on the server, and Unsubscribe waits for the server to
// acknowledge that (when connected).
func (s *Subscription) Unsubscribe(ctx context.Context) error {
	if s.merge != nil {
		return s.merge.Leave(ctx)
	}
	if s.c == nil { // an Inlet's: nothing to leave on a server
		s.end(nil)
		return nil
	}
	return s.c.unsubscribe(ctx, s, nil)
}

// A consumer that keeps up but lost the processor for a moment (a
// loaded machine, a preemption, a garbage collection) must lose nothing,
// and the connection's reader must not wait for it: every other topic and
// every call's answer on the connection would wait meanwhile. So under
// the dropping policies a full buffer first gives a runnable consumer the
// processor (yieldTries), then lends room beyond Buffer for the
// subscription's grace (Grace, DefaultGrace), and applies the policy only
// once that is spent with the buffer still full. Block is what its user
// chose: the reader waits for room. BenchmarkNotifyDelivery measures the
// choice.

// yieldTries is how many times the reader gives its processor away before
// it lends room (or, under Block, waits): a consumer that is runnable but
// not running, because it waits on the reader's processor while the other
// one is busy, runs and catches up, and the reader waits for nothing.
const yieldTries = 16

// deliver sends m to the subscription, or to its sink with place (the
// one the reader read in m, Sink), and reports whether it was delivered.
// When the buffer is full it applies the overflow policy, after the
// grace. Runs on the reader goroutine.
func (s *Subscription) deliver(m Message, place uint64) bool {
	queued, _ := s.deliverStep(m, 1, place) // kept small enough to inline: the route's loop pays no call
	return queued
}

// deliverStep is deliver with Seq moved on by step: 1, or more over
// messages known lost before they reached the subscription (Inlet); it
// also reports whether the subscription has ended.
func (s *Subscription) deliverStep(m Message, step, place uint64) (queued, ended bool) {
	if s.sink != nil {
		return s.toSink(m, place)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return false, true
	}
	s.seq += step
	m.Seq = s.seq
	queued = s.place(m) // may end the subscription (CloseSubscription)
	return queued, s.ended
}

// place queues m under the overflow policy. Called with s.mu held.
func (s *Subscription) place(m Message) bool {
	if s.offer(m, true) {
		return true
	}
	if s.grace > 0 || s.policy == Block {
		for range yieldTries {
			runtime.Gosched()
			if s.offer(m, true) {
				return true
			}
		}
	}
	if s.policy == Block {
		s.markStall()
		return s.await(m, nil)
	}
	if s.lend(m) {
		return true
	}
	switch s.policy {
	case DropNewest:
		s.drop(m.Topic)
		return false
	case CloseSubscription:
		s.drop(m.Topic)
		s.endLocked(ErrSlowConsumer)
		s.leaveAsync()
		return false
	default: // DropOldest
		// Drop the oldest until m fits: the channel's head (or the
		// message the mover is handing it), else the oldest beside it;
		// an empty buffer always has room.
		for {
			if s.offer(m, false) {
				return true
			}
			select {
			case old := <-s.ch:
				s.drop(old.Topic)
				// A mover waiting for that room hands its message in at
				// once: wait for it, so it is not counted twice.
				for s.hand.Load() {
					runtime.Gosched()
				}
				continue
			default:
			}
			// The oldest is beside the channel only once the mover's
			// message, if any, has left the channel too.
			if old, ok := s.overflow.Front(); ok && !s.hand.Load() && len(s.ch) == 0 {
				s.overflow.Pop()
				s.overflowBytes -= uint64(len(old.Data))
				s.drop(old.Topic)
				continue
			}
			runtime.Gosched() // the mover is handing its message over
		}
	}
}

// lend queues m beyond the full buffer while the episode's grace lasts
// (see Grace): for s.grace from the first message that found the buffer
// full, up to four times Buffer and twice PendingBytes. It reports
// whether m was queued. Under mu.
func (s *Subscription) lend(m Message) bool {
	if s.grace == 0 {
		return false
	}
	now := time.Now()
	if s.graceFrom.IsZero() {
		s.graceFrom = now
	} else if now.Sub(s.graceFrom) >= s.grace {
		return false
	}
	n, size := s.queued()
	if n >= 4*s.capacity || (s.pending.Limit() > 0 && size+uint64(len(m.Data)) > 2*uint64(s.pending.Limit())) {
		return false
	}
	s.push(m)
	return true
}

// markStall tells the connection's reader that it is about to wait for
// this subscription's consumer, so it re-arms its read deadline after
// (liveness.go). A merged subscription (NewMerge) is fed by its parts:
// a part whose sink may wait marks its own reader (SinkTo, toSink).
func (s *Subscription) markStall() {
	if s.merge == nil && s.c != nil {
		s.c.stalled.Store(true)
	}
}

// offer queues m if the buffer has room for it, without waiting. When the
// room is the consumer's doing (fair) and the buffer was at most half
// full, the consumer has caught up: its slow-consumer episode ends and it
// earns the grace wait again.
func (s *Subscription) offer(m Message, fair bool) bool {
	if s.overflow.Len() == 0 && !s.hand.Load() && len(s.ch) < cap(s.ch) {
		// Nothing waits beside the channel and it has room: the common
		// case, kept as short as it was before the buffer grew beside it.
		n := len(s.ch)
		if !s.pending.Fits(n, len(m.Data)) {
			return false
		}
		caughtUp := fair && (s.slow || !s.graceFrom.IsZero()) && n <= s.capacity/2 && s.pending.AtMostHalf(n)
		select {
		case s.ch <- m: // only the reader sends now: it cannot block
			s.pending.Push(len(m.Data))
		default:
			return false
		}
		if caughtUp {
			s.slow = false
			s.graceFrom = time.Time{}
		}
		return true
	}
	n, size := s.queued()
	if !s.fits(n, size, len(m.Data)) {
		return false
	}
	caughtUp := fair && (s.slow || !s.graceFrom.IsZero()) && n <= s.capacity/2 &&
		(s.pending.Limit() == 0 || size <= uint64(s.pending.Limit())/2)
	s.push(m)
	if caughtUp {
		s.slow = false
		s.graceFrom = time.Time{}
	}
	return true
}

// queued returns the messages in the buffer and the bytes of their data.
// While the mover hands a message over, the two may be off by it for a
// moment: never by more.
func (s *Subscription) queued() (n int, size uint64) {
	inCh := len(s.ch)
	if s.hand.Load() {
		inCh = min(inCh+1, cap(s.ch)+1)
	}
	n = inCh + s.overflow.Len()
	if s.pending.Limit() > 0 {
		size = s.pending.Bytes(inCh) + s.overflowBytes
	}
	return n, size
}

// fits reports whether a message of size bytes may join the n messages
// (of queuedBytes) in the buffer: always when it is empty, so an oversized
// message still goes through.
func (s *Subscription) fits(n int, queuedBytes uint64, size int) bool {
	if n == 0 {
		return true
	}
	if n >= s.capacity {
		return false
	}
	return s.pending.Limit() == 0 || queuedBytes+uint64(size) <= uint64(s.pending.Limit())
}

// push queues m, which fits: into ch while nothing waits beside it,
// else beside it, for the mover to hand over in order.
func (s *Subscription) push(m Message) {
	s.moveSome()
	if s.overflow.Len() == 0 && !s.hand.Load() {
		select {
		case s.ch <- m:
			s.pending.Push(len(m.Data))
			return
		default:
		}
	}
	s.overflow.Push(m)
	s.overflowBytes += uint64(len(m.Data))
	if !s.moving {
		s.moving = true
		go s.moveLoop()
	}
}

// moveSome hands the oldest messages beside ch into it while it has room
// and the mover holds none (which would go first). Under mu.
func (s *Subscription) moveSome() {
	for s.overflow.Len() > 0 && !s.hand.Load() {
		m, _ := s.overflow.Front()
		select {
		case s.ch <- m:
		default:
			return
		}
		s.overflow.Pop()
		s.overflowBytes -= uint64(len(m.Data))
		s.pending.Push(len(m.Data))
	}
}

// moveLoop is the subscription's mover goroutine: while messages wait
// beside ch it hands them into ch, in order, waiting for the consumer to
// make room. It runs only while the consumer is behind, and ends when
// nothing waits; when the subscription ends meanwhile it closes ch, as
// the last sender.
func (s *Subscription) moveLoop() {
	for {
		s.mu.Lock()
		m, ok := s.overflow.Front()
		if !ok || s.ended {
			s.moving = false
			if s.ended {
				close(s.ch)
			}
			s.mu.Unlock()
			return
		}
		s.overflow.Pop()
		s.overflowBytes -= uint64(len(m.Data))
		s.pending.Push(len(m.Data)) // counted in ch from now on
		s.hand.Store(true)
		s.mu.Unlock()
		select {
		case s.ch <- m:
		case <-s.quit: // ended: ch still takes m if it has room (only the mover closes it)
			select {
			case s.ch <- m:
			default:
				s.countDrops(1)
			}
		}
		s.hand.Store(false)
	}
}

// await queues m once the consumer has made room for it, and reports
// false if the subscription ended or deadline fired first (nil: never).
// Room has no signal here (the mover may be the one to make it), so it is
// polled.
func (s *Subscription) await(m Message, deadline <-chan time.Time) bool {
	for {
		s.moveSome()
		if n, size := s.queued(); s.fits(n, size, len(m.Data)) {
			s.push(m)
			return true
		}
		select {
		case <-s.quit:
			return false
		case <-deadline:
			return false
		case <-time.After(50 * time.Microsecond):
		}
	}
}

// drop counts one dropped message, of topic; the first drop of an
// episode raises a SlowConsumer event.
func (s *Subscription) drop(topic string) {
	n := s.countDrops(1)
	if !s.slow {
		s.slow = true
		if s.c != nil {
			s.c.emit(Event{Kind: SlowConsumer, Topic: topic, Dropped: n, Subscription: s})
		}
	}
}

// countDrops counts n dropped messages, in the client's stats too, and
// returns the subscription's drops so far.
func (s *Subscription) countDrops(n uint64) uint64 {
	if s.c != nil {
		s.c.stats.dropped[dropOverflow].Add(n)
	}
	return s.dropped.Add(n)
}

// end closes the subscription's channels, with err as the reason (nil
// for a clean end). Safe from any goroutine, more than once.
func (s *Subscription) end(err error) {
	s.endOnce.Do(func() { close(s.quit) })
	s.mu.Lock()
	s.endLocked(err)
	s.mu.Unlock()
}

// toSink hands m to the subscription's sink, unless it has ended. The
// sink runs without s.mu: it takes its own locks.
func (s *Subscription) toSink(m Message, place uint64) (queued, ended bool) {
	s.mu.Lock()
	ended = s.ended
	s.mu.Unlock()
	if ended {
		return false, true
	}
	if s.sinkWaits && s.c != nil {
		s.c.stalled.Store(true) // the sink may wait for a consumer (markStall)
	}
	s.sink(m, place)
	return true, false
}

// endLocked is end with s.mu held.
func (s *Subscription) endLocked(err error) {
	if s.ended {
		return
	}
	s.endOnce.Do(func() { close(s.quit) })
	s.ended = true
	s.err = err
	if err != nil {
		s.errc <- err
	}
	close(s.errc)
	// ch keeps what it holds for the consumer, and takes what waits
	// beside it while it has room; the rest is dropped, counted. The
	// mover, while it runs, closes ch itself.
	s.moveSome()
	if left := s.overflow.Len(); left > 0 {
		for s.overflow.Len() > 0 {
			s.overflow.Pop()
		}
		s.overflowBytes = 0
		s.countDrops(uint64(left))
	}
	if !s.moving {
		close(s.ch)
	}
	if s.sinkEnd != nil { // takes the merge's lock, never this one's
		s.sinkEnd(s, err)
	}
}

// leaveAsync leaves the subscription's topics off the reader goroutine (or
// a pool's forwarder), after its overflow policy ended it.
func (s *Subscription) leaveAsync() {
	switch {
	case s.merge != nil:
		s.merge.LeaveAsync()
	case s.c != nil:
		s.c.detachAsync(s)
	} // else an Inlet's: attached to no topic
}
