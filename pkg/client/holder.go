package client

import (
	"context"
	"encoding/json"
	"time"

	"github.com/wsfan/wsfan/pkg/protocol"
)

// Holder is the face of every connection-holder: one connection (a
// *Client), several spreading topics (pool.Pool), several carrying the
// same ones (standby.Standby), or a group of sidecars sharing one
// through NATS (natsbridge.Member). The sidecar reads its topics and
// forwards its clients' calls through a Holder, whichever it holds, and
// a NATS group's leader holds its upstream as one. What only some
// holders know is an optional interface: Lagger, Endpointer.
type Holder interface {
	// SubscribeTopics subscribes each topic on its own, in as few
	// requests as the holder allows: streams[i] is topic i's stream, or
	// nil with errs[i] saying why (errors.Is(errs[i], ErrRefused) when no
	// retry can help); err fails them all. topics are parsed already, by
	// the holder's dialect (protocol.Protocol.NewTopic), once at the edge
	// that took their names (the sidecar's hub, a NATS group's leader):
	// a holder does not parse them again.
	SubscribeTopics(ctx context.Context, topics []*protocol.Topic) (streams []Stream, errs []error, err error)
	// UnsubscribeStreams ends streams SubscribeTopics returned, in as
	// few requests as it can, and returns the first failure.
	UnsubscribeStreams(ctx context.Context, streams []Stream) error
	// CallRaw makes an RPC call: params is JSON (or nil) and the result
	// is the JSON result; a server's error is an *RPCError.
	CallRaw(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)
	// State is the connection state (a composite's: as its Dial says).
	State() State
	// Events reports connection state changes, gaps and notices; it is
	// closed by Close.
	Events() <-chan Event
	// Close drops the connections and ends every stream; they are gone
	// when it returns. It is safe to call more than once.
	Close() error
	// Stale reports whether topic was found stale (its messages stopped
	// while others flowed) and still is (Client.Stale).
	Stale(topic string) bool
	// Silent reports whether topic has had no message beyond its stale
	// limit, others flowing or not (Client.Silent).
	Silent(topic string) bool
	// Resync asks for topic's whole state again (a book's snapshot) and
	// reports whether it could (Client.Resync).
	Resync(topic string) bool
}

// Lagger is a Holder that measures its link: Lag is the last ping round
// trip, 0 before the first (Client.Lag).
type Lagger interface {
	Lag() time.Duration
}

// Endpointer is a Holder that knows which server it dials: Endpoint is
// the URL in use or being dialled, redacted, and its index in the list
// (Client.Endpoint).
type Endpointer interface {
	Endpoint() (url string, index int)
}

// Feed was the streams-and-calls part of a Holder.
//
// Deprecated: use Holder, which it now names.
type Feed = Holder

var (
	_ Holder     = (*Client)(nil)
	_ Lagger     = (*Client)(nil)
	_ Endpointer = (*Client)(nil)
)
