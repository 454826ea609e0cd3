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

// partOptions are the parts' options, a Pool's and a Standby's: a full
// part holds its connection's reader (Block).
var partOptions = []SubscribeOption{Buffer(partBuffer), Overflow(Block), PendingBytes(0)}

// merger feeds a subscription from its parts: it ends them all.
type merger interface {
	// end ends the subscription with err and unsubscribes the parts; it
	// returns the first failure to unsubscribe. Safe from any goroutine,
	// more than once.
	end(ctx context.Context, err error) error
	// endAsync does end off the calling goroutine (a forwarder, under
	// the subscription's overflow policy).
	endAsync()
}

// poolMerge is a Pool subscription spanning connections: one part on
// each connection, merged into one Subscription (out), whose delivery
// engine applies the user's buffer and policy. out is attached to no
// topic itself; its parts are. One forwarder goroutine a part, counted
// in the pool's wg, moves the part's messages into out.
type poolMerge struct {
	pool  *Pool
	out   *Subscription
	parts []*Subscription // set before the forwarders start, then read-only
}

// subscribeSpanning subscribes each placement's topics on its connection
// as one part, and returns a Subscription fed from every part. Called
// with p.mu held.
func (p *Pool) subscribeSpanning(ctx context.Context, names []string, placed []placement, opts []SubscribeOption) (*Subscription, error) {
	first := placed[0].c
	m := &poolMerge{pool: p, out: newSubscription(first, names, first.subscribeConfig(opts), channelSlots)}
	m.out.merge = m
	for _, pl := range placed {
		part, err := pl.c.Subscribe(ctx, pl.topics, partOptions...)
		if err != nil {
			for _, done := range m.parts {
				_ = done.Unsubscribe(context.WithoutCancel(ctx))
			}
			return nil, err
		}
		m.parts = append(m.parts, part)
	}
	for _, part := range m.parts {
		p.wg.Add(1)
		go m.forward(part)
	}
	return m.out, nil
}

// forward is a forwarder: it delivers the part's messages into out, in
// the part's order, and when the part ends, ends out with the part's
// error (none when its connection was closed) and leaves the other
// parts.
func (m *poolMerge) forward(part *Subscription) {
	defer m.pool.wg.Done()
	for msg := range part.C() {
		m.out.deliver(msg)
	}
	err := <-part.Err()
	_ = m.end(m.pool.ctx, err)
}

// end ends out with err and unsubscribes the parts, each on its
// connection. It returns the first failure to unsubscribe. Safe from any
// goroutine, more than once.
func (m *poolMerge) end(ctx context.Context, err error) error {
	m.out.end(err)
	var first error
	for _, part := range m.parts {
		if e := part.Unsubscribe(ctx); e != nil && !errors.Is(e, ErrUnsubscribed) && first == nil {
			first = e
		}
	}
	return first
}

// endAsync leaves the parts off the goroutine that ended out (a
// forwarder, under out's overflow policy), counted in the pool's wg.
func (m *poolMerge) endAsync() {
	m.pool.wg.Add(1)
	go func() {
		defer m.pool.wg.Done()
		_ = m.end(m.pool.ctx, nil)
	}()
}
