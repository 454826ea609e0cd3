package client

import (
	"context"
)

// Conn is a Holder with the typed calls and subscriptions a program
// uses: a Client, a pool.Pool and a standby.Standby are each one, so a
// program that subscribes and calls can take any, and move from one
// connection to a pool without a change.
type Conn interface {
	Holder
	// Call invokes method with params (marshalled to JSON, nil for none)
	// and decodes the result into result (nil to ignore it).
	Call(ctx context.Context, method string, params, result any) error
	// Subscribe subscribes to topics and returns once they are
	// acknowledged.
	Subscribe(ctx context.Context, topics []string, opts ...SubscribeOption) (*Subscription, error)
}

// A Client is a Conn.
var _ Conn = (*Client)(nil)
