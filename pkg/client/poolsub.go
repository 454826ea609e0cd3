package client

import (
	"context"
	"errors"
)

// partBuffer is the buffer of each connection's part of a subscription
// that spans connections. Its forwarder drains it into the Subscription,
// and a full part holds its connection's reader (the part's policy is
// Block), so messages are dropped, if at all, by the Subscription's own
// policy, in one place. It is no larger than a channel, so a part holds
// nothing beside its channel: when a part ends, its forwarder still
// drains every message it held, where a larger buffer would drop what
// waited beside the channel (see Subscription.C).
const partBuffer = channelSlots

// subscribeSpanning subscribes each placement's topics on its connection
// as one part, and returns a Subscription fed from every part. Called
// with p.mu held.
func (p *Pool) subscribeSpanning(ctx context.Context, names []string, placed []placement, opts []SubscribeOption) (*Subscription, error) {
	first := placed[0].c
	s := newSubscription(first, names, first.subscribeConfig(opts), channelSlots)
	s.pool = p
	partOpts := []SubscribeOption{Buffer(partBuffer), Overflow(Block), PendingBytes(0)}
	for _, pl := range placed {
		part, err := pl.c.Subscribe(ctx, pl.topics, partOpts...)
		if err != nil {
			for _, done := range s.parts {
				_ = done.Unsubscribe(context.WithoutCancel(ctx))
			}
			return nil, err
		}
		s.parts = append(s.parts, part)
	}
	for _, part := range s.parts {
		p.wg.Add(1)
		go s.forward(part)
	}
	return s, nil
}

// forward is a spanning subscription's goroutine for one part: it
// delivers the part's messages into s, in the part's order, and when the
// part ends, ends s with the part's error (none when its connection was
// closed) and leaves the other parts.
func (s *Subscription) forward(part *Subscription) {
	defer s.pool.wg.Done()
	for m := range part.C() {
		s.deliver(m)
	}
	err := <-part.Err()
	_ = s.endParts(s.pool.ctx, err)
}

// endParts ends a spanning subscription with err and unsubscribes its
// parts, each on its connection. It returns the first failure to
// unsubscribe. Safe from any goroutine, more than once.
func (s *Subscription) endParts(ctx context.Context, err error) error {
	s.end(err)
	var first error
	for _, part := range s.parts {
		if e := part.Unsubscribe(ctx); e != nil && !errors.Is(e, ErrUnsubscribed) && first == nil {
			first = e
		}
	}
	return first
}

// detachAsync leaves the subscription's topics off the reader goroutine,
// after its overflow policy ended it.
func (s *Subscription) detachAsync() {
	if s.c == nil { // an Inlet's: attached to no topic
		return
	}
	if s.parts == nil {
		s.c.detachAsync(s)
		return
	}
	s.pool.wg.Add(1) // a forwarder, counted in wg, is the caller
	go func() {
		defer s.pool.wg.Done()
		_ = s.endParts(s.pool.ctx, nil)
	}()
}
