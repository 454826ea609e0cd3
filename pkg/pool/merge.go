package pool

import (
	"context"
	"errors"

	"github.com/wsfan/wsfan/pkg/client"
)

// partBuffer is the buffer of each connection's part of a subscription
// that spans connections: the 64 slots of a subscription's channel
// (client.Subscription.C). Its forwarder drains it into the merged
// Subscription, and a full part holds its connection's reader (the
// part's policy is Block), so messages are dropped, if at all, by the
// merged Subscription's own policy, in one place. It is no larger than a
// channel, so a part holds nothing beside its channel: when a part ends,
// its forwarder still drains every message it held, where a larger
// buffer would drop what waited beside the channel.
const partBuffer = 64

// partOptions are the parts' options: a full part holds its
// connection's reader (Block).
var partOptions = []client.SubscribeOption{client.Buffer(partBuffer), client.Overflow(client.Block), client.PendingBytes(0)}

// spanning is a subscription spanning connections: one part on each
// connection, merged into one Subscription (out, client.NewMerge), whose
// delivery engine applies the user's buffer and policy. out is attached
// to no topic itself; its parts are. One forwarder goroutine a part,
// counted in the pool's wg, moves the part's messages into out.
type spanning struct {
	pool  *Pool
	out   *client.Inlet
	parts []*client.Subscription // set before the forwarders start, then read-only
}

// subscribeSpanning subscribes each placement's topics on its connection
// as one part, and returns a Subscription fed from every part. Called
// with p.mu held.
func (p *Pool) subscribeSpanning(ctx context.Context, names []string, placed []placement, opts []client.SubscribeOption) (*client.Subscription, error) {
	m := &spanning{pool: p}
	m.out = placed[0].c.NewMerge(names, m, opts...)
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
	return m.out.Subscription(), nil
}

// forward is a forwarder: it delivers the part's messages into out, in
// the part's order, and when the part ends, ends out with the part's
// error (none when its connection was closed) and leaves the other
// parts.
func (m *spanning) forward(part *client.Subscription) {
	defer m.pool.wg.Done()
	for msg := range part.C() {
		m.out.Deliver(msg, 1)
	}
	err := <-part.Err()
	_ = m.end(m.pool.ctx, err)
}

// end ends out with err and unsubscribes the parts, each on its
// connection. It returns the first failure to unsubscribe. Safe from any
// goroutine, more than once.
func (m *spanning) end(ctx context.Context, err error) error {
	m.out.End(err)
	var first error
	for _, part := range m.parts {
		if e := part.Unsubscribe(ctx); e != nil && !errors.Is(e, client.ErrUnsubscribed) && first == nil {
			first = e
		}
	}
	return first
}

// Leave is the consumer's Unsubscribe (client.Leaver).
func (m *spanning) Leave(ctx context.Context) error { return m.end(ctx, nil) }

// LeaveAsync leaves the parts off the goroutine that ended out (a
// forwarder, under out's overflow policy), counted in the pool's wg.
func (m *spanning) LeaveAsync() {
	m.pool.wg.Add(1)
	go func() {
		defer m.pool.wg.Done()
		_ = m.end(m.pool.ctx, nil)
	}()
}
