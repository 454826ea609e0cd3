package client

import (
	"context"
	"sync"
	"sync/atomic"
)

// Subscription is a stream of messages for one or more topics. Read them
// from C; when the subscription ends, C is closed and Err yields the
// reason (nothing, for Unsubscribe and Close).
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

	quit    chan struct{} // closed first when ending: releases a Block-policy send
	endOnce sync.Once

	// states are the topics this subscription is attached to. c.mu
	// protects it; nil once detached.
	states []*topicState
}

func newSubscription(c *Client, topics []string) *Subscription {
	return &Subscription{
		c:      c,
		topics: topics,
		ch:     make(chan Message, c.cfg.bufferSize),
		errc:   make(chan error, 1),
		policy: c.cfg.overflow,
		quit:   make(chan struct{}),
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

// Dropped returns how many messages the overflow policy dropped.
func (s *Subscription) Dropped() uint64 { return s.dropped.Load() }

// Topics returns the subscription's topics.
func (s *Subscription) Topics() []string { return append([]string(nil), s.topics...) }

// Unsubscribe ends the subscription. Topics no other subscription uses
// are unsubscribed on the server, and Unsubscribe waits for the server to
// acknowledge that (when connected).
func (s *Subscription) Unsubscribe(ctx context.Context) error {
	return s.c.unsubscribe(ctx, s, nil)
}

// deliver sends m to the subscription under its overflow policy and
// reports whether it was delivered. Runs on the reader goroutine.
func (s *Subscription) deliver(m Message) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return false
	}
	s.seq++
	m.Seq = s.seq
	select {
	case s.ch <- m:
		return true
	default:
	}
	switch s.policy {
	case DropNewest:
		s.dropped.Add(1)
		s.c.stats.dropped[dropOverflow].Add(1)
		return false
	case Block:
		select {
		case s.ch <- m:
			return true
		case <-s.quit:
			return false
		}
	case CloseSubscription:
		s.dropped.Add(1)
		s.c.stats.dropped[dropOverflow].Add(1)
		s.endLocked(ErrSlowConsumer)
		s.c.detachAsync(s)
		return false
	default: // DropOldest
		select {
		case <-s.ch:
			s.dropped.Add(1)
			s.c.stats.dropped[dropOverflow].Add(1)
		default:
		}
		select {
		case s.ch <- m:
			return true
		default: // the consumer cannot have filled it again; stay safe
			s.dropped.Add(1)
			s.c.stats.dropped[dropOverflow].Add(1)
			return false
		}
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
	if err != nil {
		s.errc <- err
	}
	close(s.errc)
	close(s.ch)
}
