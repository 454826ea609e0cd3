package client

import (
	"context"
	"encoding/json"

	"github.com/wsfan/wsfan/pkg/protocol"
)

// The seams a composite of connections is built on: a type of another
// package holding several Clients (package pool spreads topics over
// connections, package standby merges legs that carry the same ones)
// takes from here what it needs, and nothing of a Client's internals.

// Leaver is what a merged Subscription (NewMerge) does when its consumer
// leaves it: the composite that feeds it from its parts, subscriptions
// on other connections, unsubscribes them.
type Leaver interface {
	// Leave ends the merged subscription and unsubscribes its parts: the
	// consumer's Unsubscribe. It returns the first failure to
	// unsubscribe. Safe from any goroutine, more than once.
	Leave(ctx context.Context) error
	// LeaveAsync does Leave off the calling goroutine, which delivered
	// into the subscription and ended it under its overflow policy.
	LeaveAsync()
}

// NewMerge returns an Inlet feeding a new Subscription to topics, with
// opts over c's delivery defaults, attached to no topic of c: its
// composite delivers into it the messages of its parts and ends it. Its
// slow-consumer events and drops are counted on c; its consumer's
// Unsubscribe calls leave.Leave.
func (c *Client) NewMerge(topics []string, leave Leaver, opts ...SubscribeOption) *Inlet {
	s := newSubscription(c, topics, c.subscribeConfig(opts), channelSlots)
	s.merge = leave
	return &Inlet{s: s}
}

// A Sink takes a part's messages (SinkTo) with the place the client read
// in each on the way: a sequenced topic's change id, else a backfilling
// topic's position (a head's number); 0 where it read none (a message
// the supervisor fetched or held, a topic with no place), and the sink
// reads the place itself if it needs one.
type Sink func(m Message, place uint64)

// SinkTo is the option of a subscription whose messages are handed to
// offer, on the goroutine delivering them (its connection's reader), in
// place of its channel, and whose end is told once to ended: a part of
// the merged subscription into fed (NewMerge). When fed's overflow
// policy is Block, offer may wait for fed's consumer, and the reader
// then gives its link a fresh read deadline after.
func SinkTo(into *Inlet, offer Sink, ended func(part *Subscription, err error)) SubscribeOption {
	return sinkTo{sink: offer, end: ended, waits: into.s.policy == Block}
}

// ParseTopics parses topics with c's dialect, each once (a repeated name
// is dropped), as Subscribe does: names in their order and their parsed
// form, or the first topic the dialect refuses.
func (c *Client) ParseTopics(topics []string) (names []string, parsed []*protocol.Topic, err error) {
	return c.parseTopics(topics)
}

// Holds reports whether c's topic table holds topic.
func (c *Client) Holds(topic string) bool { return c.holds(topic) }

// TopicCount is how many topics c's table holds.
func (c *Client) TopicCount() int {
	_, n := c.counts()
	return n
}

// WithMetricsSuffix appends suffix to the connection label of
// WithMetrics, given before it: each connection of a composite registers
// under a label of its own ("<name>-1", "<name>-leg1"). Without
// WithMetrics it does nothing.
func WithMetricsSuffix(suffix string) Option {
	return clientOption(func(c *config) {
		if c.registerer != nil {
			c.metricsName += suffix
		}
	})
}

// CallJSON makes a call through callRaw (a composite's CallRaw) with
// params and result as Client.Call takes them: params marshalled to JSON
// (nil for none, json.RawMessage or []byte as they are), the result
// decoded into result (nil to ignore it).
func CallJSON(ctx context.Context, method string, params, result any,
	callRaw func(context.Context, string, json.RawMessage) (json.RawMessage, error)) error {
	return callJSON(ctx, method, params, result, callRaw)
}
