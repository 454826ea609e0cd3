package client

import (
	"context"
	"encoding/json"
)

// Conn is what a Client and a pool.Pool both do: a program that
// subscribes and calls can take either, and move from one connection to a
// pool without a change.
type Conn interface {
	// Call invokes method with params (marshalled to JSON, nil for none)
	// and decodes the result into result (nil to ignore it).
	Call(ctx context.Context, method string, params, result any) error
	// CallRaw invokes method with params as JSON and returns the raw
	// result.
	CallRaw(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)
	// Subscribe subscribes to topics and returns once they are
	// acknowledged.
	Subscribe(ctx context.Context, topics []string, opts ...SubscribeOption) (*Subscription, error)
	// Events reports connection state changes, gaps and notices.
	Events() <-chan Event
	// State is the connection state (a pool's: its worst connection's).
	State() State
	// Close ends every connection and subscription.
	Close() error
}

// A Client is a Conn.
var _ Conn = (*Client)(nil)
