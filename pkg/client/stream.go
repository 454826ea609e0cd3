package client

import "context"

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
