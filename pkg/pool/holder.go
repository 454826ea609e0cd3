package pool

import (
	"context"
	"fmt"

	"github.com/wsfan/wsfan/internal/format"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// The rest of a client.Holder: streams placed as Subscribe places
// topics, and a topic's health asked of the connection that holds it.

// SubscribeTopics subscribes each topic on its own, a Stream each, for
// a Holder's reader: topics are placed as Subscribe places them (a topic
// a connection holds stays there, the others go where there is room, on
// new connections when none has), and each connection subscribes its
// share with client.Client.SubscribeTopics, the topics as they were
// parsed, so one a connection cannot serve fails alone. When a
// connection fails them all, the streams already made on the others are
// unsubscribed and err says why.
func (p *Pool) SubscribeTopics(ctx context.Context, topics []*protocol.Topic) ([]client.Stream, []error, error) {
	names := make([]string, len(topics))
	for i, t := range topics {
		names[i] = t.Name
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, nil, client.ErrClosed
	}
	placed, err := p.place(ctx, names)
	if err != nil {
		return nil, nil, fmt.Errorf("failed to subscribe %s: %w", format.QuotedList(names), err)
	}
	streams, errs := make([]client.Stream, len(topics)), make([]error, len(topics))
	index := indexes(names, placed)
	for k, pl := range placed {
		share := make([]*protocol.Topic, len(index[k]))
		for j, i := range index[k] {
			share[j] = topics[i]
		}
		ss, es, err := pl.c.SubscribeTopics(ctx, share)
		if err != nil {
			for _, made := range streams {
				if made != nil {
					_ = made.Unsubscribe(ctx)
				}
			}
			return nil, nil, err
		}
		for j, i := range index[k] {
			streams[i], errs[i] = ss[j], es[j]
		}
	}
	return streams, errs, nil
}

// indexes maps each placed topic to its index in topics: index[k][j] is
// placed[k].topics[j]'s. A name given twice takes its indexes in order.
func indexes(topics []string, placed []placement) [][]int {
	at := make(map[string][]int, len(topics))
	for i, t := range topics {
		at[t] = append(at[t], i)
	}
	index := make([][]int, len(placed))
	for k, pl := range placed {
		for _, t := range pl.topics {
			index[k] = append(index[k], at[t][0])
			at[t] = at[t][1:]
		}
	}
	return index
}

// UnsubscribeStreams ends streams SubscribeTopics returned: each
// connection's own in one round of requests
// (client.Client.UnsubscribeStreams), and returns the first failure.
func (p *Pool) UnsubscribeStreams(ctx context.Context, streams []client.Stream) error {
	p.mu.Lock()
	members := append([]*client.Client(nil), p.members...)
	p.mu.Unlock()
	mine := make(map[*client.Client][]client.Stream)
	var others []client.Stream
	for _, s := range streams {
		if s == nil {
			continue
		}
		if c := holding(members, s); c != nil {
			mine[c] = append(mine[c], s)
			continue
		}
		others = append(others, s)
	}
	first := client.UnsubscribeAll(ctx, others)
	for _, c := range members {
		if len(mine[c]) == 0 {
			continue
		}
		if err := c.UnsubscribeStreams(ctx, mine[c]); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// holding returns the connection of members whose table holds s's
// topic, or nil for a stream of no connection (one already ended, or
// not a *client.Subscription).
func holding(members []*client.Client, s client.Stream) *client.Client {
	sub, ok := s.(*client.Subscription)
	if !ok {
		return nil
	}
	topics := sub.Topics()
	if len(topics) == 0 {
		return nil
	}
	for _, c := range members {
		if c.Holds(topics[0]) {
			return c
		}
	}
	return nil
}

// on returns the connection that holds topic, or nil.
func (p *Pool) on(topic string) *client.Client {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.holder(topic)
}

// Stale reports whether topic is stale on the connection that holds it
// (client.Client.Stale); false for a topic no connection holds.
func (p *Pool) Stale(topic string) bool {
	c := p.on(topic)
	return c != nil && c.Stale(topic)
}

// Silent reports whether topic is silent on the connection that holds
// it (client.Client.Silent); false for a topic no connection holds.
func (p *Pool) Silent(topic string) bool {
	c := p.on(topic)
	return c != nil && c.Silent(topic)
}

// Resync resubscribes topic on the connection that holds it
// (client.Client.Resync); false for a topic no connection holds.
func (p *Pool) Resync(topic string) bool {
	c := p.on(topic)
	return c != nil && c.Resync(topic)
}
