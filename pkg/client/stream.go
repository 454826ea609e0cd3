package client

import (
	"context"
	"errors"

	"github.com/wsfan/wsfan/pkg/protocol"
)

// Stream is anything that reads like a subscription: the messages of one
// or more topics on C, why they ended on Err, how many were dropped, and
// how to stop them. *Subscription is one; natsbridge.Subscription, a
// group's stream read from NATS, is another; the sidecar's topics read
// from either through this interface alone.
type Stream interface {
	// C delivers the messages; it is closed when the stream ends.
	C() <-chan Message
	// Err yields why the stream ended, and nothing after Unsubscribe or
	// Close; it is then closed.
	Err() <-chan error
	// Dropped counts the messages the stream's overflow policy dropped.
	Dropped() uint64
	// Unsubscribe ends the stream.
	Unsubscribe(ctx context.Context) error
}

var _ Stream = (*Subscription)(nil)

// SubscribeTopics is SubscribeEachTopic with the client's default
// delivery options, a Stream each: a Holder's subscribe. topics are
// parsed by the client's dialect (protocol.Protocol.NewTopic) and are
// not parsed again; each is clash-checked once (clashesLocked), and one
// routed like another under another name (one subscription on the
// server), or one this client cannot be served, is refused
// (ErrRefused) rather than failing the rest.
func (c *Client) SubscribeTopics(ctx context.Context, topics []*protocol.Topic) ([]Stream, []error, error) {
	subs, errs, err := c.SubscribeEachTopic(ctx, topics)
	if err != nil {
		return nil, nil, err
	}
	streams := make([]Stream, len(topics))
	for i, s := range subs {
		if s != nil {
			streams[i] = s
		}
	}
	return streams, errs, nil
}

// SubscribeStreams is SubscribeTopics for topics by name: each is parsed
// once with the client's dialect, and a topic the dialect cannot express
// is refused (ErrRefused) rather than failing the rest.
//
// Deprecated: a Holder subscribes parsed topics; use SubscribeTopics,
// or SubscribeEach. It goes in the next release.
func (c *Client) SubscribeStreams(ctx context.Context, topics []string) ([]Stream, []error, error) {
	streams, errs := make([]Stream, len(topics)), make([]error, len(topics))
	parsed := make([]*protocol.Topic, 0, len(topics))
	at := make([]int, 0, len(topics))
	for i, name := range topics {
		t, err := c.proto.NewTopic(name)
		if err != nil {
			errs[i] = &RefusedError{Topics: []string{name}, Cause: err}
			continue
		}
		parsed, at = append(parsed, t), append(at, i)
	}
	if len(parsed) == 0 {
		return streams, errs, nil
	}
	ss, serrs, err := c.SubscribeTopics(ctx, parsed)
	if err != nil {
		return nil, nil, err
	}
	for j, i := range at {
		streams[i], errs[i] = ss[j], serrs[j]
	}
	return streams, errs, nil
}

// UnsubscribeAll ends each stream by its own Unsubscribe and returns
// the first failure; a stream already ended (ErrUnsubscribed) is none,
// and a nil stream is skipped. A Holder whose streams need no round of
// requests of their own (a Standby's, a NATS member's) ends them so.
func UnsubscribeAll(ctx context.Context, streams []Stream) error {
	var first error
	for _, s := range streams {
		if s == nil {
			continue
		}
		if err := s.Unsubscribe(ctx); err != nil && !errors.Is(err, ErrUnsubscribed) && first == nil {
			first = err
		}
	}
	return first
}

// UnsubscribeStreams ends streams: this client's subscriptions in one
// round of requests (UnsubscribeEach), any other stream by its own
// Unsubscribe (UnsubscribeAll). A stream already ended is not a failure.
func (c *Client) UnsubscribeStreams(ctx context.Context, streams []Stream) error {
	var own []*Subscription
	var others []Stream
	for _, s := range streams {
		if sub, ok := s.(*Subscription); ok && sub.c == c && sub.merge == nil {
			own = append(own, sub)
			continue
		}
		others = append(others, s)
	}
	first := UnsubscribeAll(ctx, others)
	if len(own) > 0 {
		if err := c.UnsubscribeEach(ctx, own); err != nil && first == nil {
			first = err
		}
	}
	return first
}
