package natsbridge

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/wsfan/wsfan/pkg/client"
)

// Subscription is a stream of a group's messages for one or more topics,
// read from NATS: each topic's last value first (when the group has one),
// then the live stream, with no duplicate and no reordering. It is a
// client.Stream, and reads like a *client.Subscription: Message.Seq
// counts from 1 and jumps over lost messages, FlagReconnected marks a
// topic's first message from a new leader (or after the leader's
// upstream reconnected) and FlagGap a message after lost ones.
type Subscription struct {
	m       *Member
	topics  []string
	readers []*topicReader // one per topic; set before the subscription is shared
	ch      chan client.Message
	errc    chan error // capacity 1; closed when the subscription ends
	policy  client.OverflowPolicy

	dropped atomic.Uint64
	wanted  atomic.Bool // the topics were added to the member's wants

	// mu serializes delivery (the NATS handler goroutines of its topics)
	// with ending (any goroutine), so a message is never sent on a closed
	// channel and Seq grows in delivery order.
	mu    sync.Mutex
	seq   uint64
	ended bool

	quit      chan struct{} // closed first when ending: releases a Block-policy send
	quitOnce  sync.Once
	cleanOnce sync.Once // the NATS subscriptions and the wants are released once
}

func newSubscription(m *Member, topics []string) *Subscription {
	return &Subscription{
		m:      m,
		topics: topics,
		ch:     make(chan client.Message, m.cfg.bufferSize),
		errc:   make(chan error, 1),
		policy: m.cfg.overflow,
		quit:   make(chan struct{}),
	}
}

// C returns the channel messages arrive on, in order per topic. It is
// closed when the subscription ends.
func (s *Subscription) C() <-chan client.Message { return s.ch }

// Err returns a channel that yields why the subscription ended (a topic
// the upstream refused, client.ErrSlowConsumer) and is then closed; it
// is closed without a value after Unsubscribe or the member's Close.
func (s *Subscription) Err() <-chan error { return s.errc }

// Dropped returns how many messages the overflow policy dropped.
func (s *Subscription) Dropped() uint64 { return s.dropped.Load() }

// Topics returns the subscription's topics.
func (s *Subscription) Topics() []string { return append([]string(nil), s.topics...) }

// Unsubscribe ends the subscription and withdraws its topics from what
// this member wants; the leader unsubscribes upstream once no member
// wants a topic for the grace period. It returns client.ErrUnsubscribed
// when the subscription had already ended.
func (s *Subscription) Unsubscribe(context.Context) error {
	if !s.finish(nil) {
		return client.ErrUnsubscribed
	}
	return nil
}

// deliver sends m under the overflow policy, step past the previous
// message. Called by a topic's NATS handler goroutine; it reports
// whether the subscription must now be released (CloseSubscription).
func (s *Subscription) deliver(m client.Message, step uint64) (release bool) {
	st := &s.m.stats
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return false
	}
	s.seq += step
	m.Seq = s.seq
	select {
	case s.ch <- m:
		st.delivered.Add(1)
		return false
	default:
	}
	switch s.policy {
	case client.DropNewest:
		s.drop()
	case client.Block:
		select {
		case s.ch <- m:
			st.delivered.Add(1)
		case <-s.quit:
		}
	case client.CloseSubscription:
		s.drop()
		s.endLocked(client.ErrSlowConsumer)
		return true
	default: // DropOldest
		select {
		case <-s.ch:
			s.drop()
		default:
		}
		select {
		case s.ch <- m:
			st.delivered.Add(1)
		default: // the consumer cannot have filled it again; stay safe
			s.drop()
		}
	}
	return false
}

func (s *Subscription) drop() {
	s.dropped.Add(1)
	s.m.stats.dropped.Add(1)
}

// finish ends the subscription with err (nil for a clean end) and
// releases its NATS subscriptions and wants. It reports whether this
// call ended it. Safe from any goroutine, a topic's handler included.
func (s *Subscription) finish(err error) bool {
	s.quitOnce.Do(func() { close(s.quit) })
	s.mu.Lock()
	ended := s.endLocked(err)
	s.mu.Unlock()
	s.release()
	return ended
}

// endLocked closes the channels once, with err as the reason, and
// reports whether it did. Called with s.mu held.
func (s *Subscription) endLocked(err error) bool {
	if s.ended {
		return false
	}
	s.quitOnce.Do(func() { close(s.quit) })
	s.ended = true
	if err != nil {
		s.errc <- err
	}
	close(s.errc)
	close(s.ch)
	return true
}

// release stops the NATS subscriptions, withdraws the topics from the
// member's wants and forgets the subscription, once.
func (s *Subscription) release() {
	s.cleanOnce.Do(func() {
		for _, r := range s.readers {
			r.stop()
		}
		if s.wanted.Load() {
			s.m.wants.release(s.topics)
		}
		s.m.forget(s)
	})
}
