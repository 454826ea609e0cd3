package natsbridge

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// Subscription is a stream of a group's messages for one or more topics,
// read from NATS: each topic's last value first (when the group has one),
// then the live stream, with no duplicate and no reordering. It is a
// client.Stream delivered by pkg/client's own engine (a client.Inlet):
// the same buffer, overflow policy, byte limit and slow-consumer handling
// as a *client.Subscription. Message.Seq counts from 1 and jumps over
// lost messages, FlagReconnected marks a topic's first message from a new
// leader (or after the leader's upstream reconnected) and FlagGap a
// message after lost ones.
type Subscription struct {
	m       *Member
	topics  []string
	readers []*topicReader // one per topic; set before the subscription is shared
	in      *client.Inlet  // delivers; its Subscription is what the consumer reads
	// parsed are the topics as the caller parsed them (SubscribeTopics;
	// parsed[i] is topics[i]), nil when it named them; read-only.
	parsed []*protocol.Topic

	wanted    atomic.Bool // the topics were added to the member's wants
	cleanOnce sync.Once   // the NATS subscriptions and the wants are released once
}

func newSubscription(m *Member, topics []string) *Subscription {
	return &Subscription{m: m, topics: topics, in: client.NewInlet(topics, m.cfg.delivery...)}
}

// C returns the channel messages arrive on, in order per topic. It is
// closed when the subscription ends.
func (s *Subscription) C() <-chan client.Message { return s.in.Subscription().C() }

// Err returns a channel that yields why the subscription ended (a topic
// the upstream refused, client.ErrSlowConsumer) and is then closed; it
// is closed without a value after Unsubscribe or the member's Close.
func (s *Subscription) Err() <-chan error { return s.in.Subscription().Err() }

// Dropped returns how many messages were dropped: by the overflow policy,
// and those lost before the subscription's first message (while the
// topic's last value was read).
func (s *Subscription) Dropped() uint64 { return s.in.Subscription().Dropped() }

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

// deliver hands m to the subscription, step past the previous message.
// Called by a topic's NATS handler goroutine; it reports whether the
// subscription must now be released (it ended: CloseSubscription, or its
// consumer left).
func (s *Subscription) deliver(m client.Message, step uint64) (release bool) {
	st := &s.m.stats
	before := s.Dropped()
	queued, ended := s.in.Deliver(m, step)
	if queued {
		st.delivered.Add(1)
	}
	if n := s.Dropped() - before; n > 0 {
		st.dropped.Add(n)
	}
	return ended
}

// drop counts a message lost before it reached the subscription.
func (s *Subscription) drop() {
	s.in.Drop(1)
	s.m.stats.dropped.Add(1)
}

// finish ends the subscription with err (nil for a clean end) and
// releases its NATS subscriptions and wants. It reports whether this
// call ended it. Safe from any goroutine, a topic's handler included.
func (s *Subscription) finish(err error) bool {
	ended := s.in.End(err)
	s.release()
	return ended
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
