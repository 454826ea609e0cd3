package client

import (
	"context"
	"iter"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
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

	dropped atomic.Uint64

	// mu serializes delivery (reader goroutine) with ending (any
	// goroutine), so a message is never sent on a closed channel.
	mu    sync.Mutex
	seq   uint64 // frames received, delivered or dropped
	ended bool
	err   error // why it ended; written before ch and errc close
	// Owned by the reader goroutine, under mu.
	slow    bool          // in a slow-consumer episode: a drop since the consumer last caught up
	waited  time.Duration // grace spent waiting for room since the consumer last caught up; see graceBudget
	pending pendingBytes  // bytes of data in ch; limit 0 when unbounded

	quit    chan struct{} // closed first when ending: releases a Block-policy send
	endOnce sync.Once

	// states are the topics this subscription is attached to. c.mu
	// protects it; nil once detached.
	states []*topicState

	// A subscription of a Pool spanning connections (poolsub.go) is fed
	// by its parts, one per connection, and attached to no topic itself.
	// Set before it is shared.
	pool  *Pool
	parts []*Subscription
}

func newSubscription(c *Client, topics []string, sc subConfig) *Subscription {
	return &Subscription{
		c:       c,
		topics:  topics,
		ch:      make(chan Message, sc.buffer),
		errc:    make(chan error, 1),
		policy:  sc.overflow,
		pending: newPendingBytes(sc.buffer, sc.pendingBytes),
		quit:    make(chan struct{}),
	}
}

// C returns the channel messages arrive on, in the order the server sent
// them. It is closed when the subscription ends.
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

// Dropped returns how many messages the overflow policy dropped.
func (s *Subscription) Dropped() uint64 { return s.dropped.Load() }

// Topics returns the subscription's topics.
func (s *Subscription) Topics() []string { return append([]string(nil), s.topics...) }

// Unsubscribe ends the subscription. Topics no other subscription uses
// are unsubscribed on the server, and Unsubscribe waits for the server to
// acknowledge that (when connected).
func (s *Subscription) Unsubscribe(ctx context.Context) error {
	if s.parts != nil {
		return s.endParts(ctx, nil)
	}
	return s.c.unsubscribe(ctx, s, nil)
}

// Before a full buffer makes the reader drop, a consumer that is runnable
// but not running gets its chance: the reader yields the processor
// yieldTries times (enough when the consumer waits on the same
// processor), then waits for room (when it waits on a loaded machine's
// other processor, or was preempted), out of a budget of graceBudget per
// episode. The budget is earned again only when the consumer catches up
// (a delivery finds the buffer at most half full, in messages and in
// bytes), so a consumer really slower than the feed holds the reader up
// for at most graceBudget per episode, not per message, while one that
// keeps up but lost the processor for a few milliseconds loses nothing. Catching up also ends the episode: taking one message
// out of a full buffer does not. Nothing of this runs while there is
// room. BenchmarkNotifyDelivery measures the choice.
const (
	yieldTries  = 16
	graceBudget = 5 * time.Millisecond
)

// deliver sends m to the subscription and reports whether it was
// delivered. When the buffer is full it first lets a runnable consumer
// catch up, then applies the overflow policy. Runs on the reader
// goroutine.
func (s *Subscription) deliver(m Message) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return false
	}
	s.seq++
	m.Seq = s.seq
	if s.offer(m, true) {
		return true
	}
	for range yieldTries {
		runtime.Gosched()
		if s.offer(m, true) {
			return true
		}
	}
	if s.policy == Block {
		return s.await(m, nil)
	}
	if s.waited < graceBudget {
		start := time.Now()
		t := time.NewTimer(graceBudget - s.waited)
		ok := s.await(m, t.C)
		t.Stop()
		s.waited += max(time.Since(start), time.Microsecond) // a wait always spends some budget
		if ok {
			return true
		}
	}
	switch s.policy {
	case DropNewest:
		s.drop(m.Topic)
		return false
	case CloseSubscription:
		s.drop(m.Topic)
		s.endLocked(ErrSlowConsumer)
		s.detachAsync()
		return false
	default: // DropOldest
		// Drop the oldest until m fits; an empty channel always has room
		// (the reader is its only sender).
		for {
			if s.offer(m, false) {
				return true
			}
			select {
			case old := <-s.ch:
				s.drop(old.Topic)
			default:
			}
		}
	}
}

// offer sends m if the buffer has room for it, without waiting. When the
// room is the consumer's doing (fair) and the buffer was at most half
// full, the consumer has caught up: its slow-consumer episode ends and it
// earns the grace wait again.
func (s *Subscription) offer(m Message, fair bool) bool {
	n := len(s.ch)
	if !s.pending.fits(n, len(m.Data)) {
		return false
	}
	caughtUp := fair && (s.slow || s.waited > 0) && n <= cap(s.ch)/2 && s.pending.atMostHalf(n)
	select {
	case s.ch <- m:
		s.pending.push(len(m.Data))
	default:
		return false
	}
	if caughtUp {
		s.slow = false
		s.waited = 0
	}
	return true
}

// await sends m once the consumer has made room for it, and reports
// false if the subscription ended or deadline fired first (nil: never).
// Room in bytes has no signal, so it is polled.
func (s *Subscription) await(m Message, deadline <-chan time.Time) bool {
	for !s.pending.fits(len(s.ch), len(m.Data)) {
		select {
		case <-s.quit:
			return false
		case <-deadline:
			return false
		case <-time.After(50 * time.Microsecond):
		}
	}
	select {
	case s.ch <- m:
		s.pending.push(len(m.Data))
		return true
	case <-s.quit:
		return false
	case <-deadline:
		return false
	}
}

// drop counts one dropped message, of topic; the first drop of an
// episode raises a SlowConsumer event.
func (s *Subscription) drop(topic string) {
	n := s.dropped.Add(1)
	s.c.stats.dropped[dropOverflow].Add(1)
	if !s.slow {
		s.slow = true
		s.c.emit(Event{Kind: SlowConsumer, Topic: topic, Dropped: n, Subscription: s})
	}
}

// end closes the subscription's channels, with err as the reason (nil
// for a clean end). Safe from any goroutine, more than once.
func (s *Subscription) end(err error) {
	s.endOnce.Do(func() { close(s.quit) })
	s.mu.Lock()
	s.endLocked(err)
	s.mu.Unlock()
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
	close(s.ch)
}
