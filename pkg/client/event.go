package client

import (
	"fmt"
	"time"
)

// State is the connection state of a Client.
type State int32

const (
	// StateConnecting: dialing, or running the on-connect hook and
	// restoring subscriptions on a fresh connection.
	StateConnecting State = iota
	// StateConnected: every subscription is live.
	StateConnected
	// StateReconnecting: the connection was lost; waiting to dial again.
	StateReconnecting
	// StateClosed: Close was called, or reconnecting gave up.
	StateClosed
)

func (s State) String() string {
	switch s {
	case StateConnecting:
		return "connecting"
	case StateConnected:
		return "connected"
	case StateReconnecting:
		return "reconnecting"
	case StateClosed:
		return "closed"
	}
	return fmt.Sprintf("State(%d)", int32(s))
}

// EventKind says what happened.
type EventKind uint8

const (
	// Connected: a connection is up and its on-connect hook succeeded.
	Connected EventKind = iota + 1
	// Disconnected: the connection was lost; Err says why.
	Disconnected
	// Reconnecting: the client will dial again after Wait; Attempt counts
	// from 1 per outage and Err is the last failure.
	Reconnecting
	// Resubscribed: every topic was restored on the new connection; Topics
	// counts them.
	Resubscribed
	// Gap: a change id on Topic did not follow the previous one.
	Gap
	// ServerNotice: the server announced it will close the connection
	// soon; the client reconnects at once.
	ServerNotice
	// SlowConsumer: Subscription dropped a message of Topic by its
	// overflow policy; Dropped is its drop count so far. Raised once per
	// episode, however many messages it drops: the next is raised only
	// after the consumer caught up (a message was delivered into a buffer
	// at most half full).
	SlowConsumer
	// Lagging: a ping's round trip, Lag, exceeded half the pong timeout:
	// the link is slow or has a backlog. At the pong timeout the
	// connection is dropped as dead. Raised once per episode: the next
	// only after a round trip under a quarter of the timeout.
	Lagging
	// Stale: Topic was silent for much longer than its usual interval
	// while other topics flowed (WithStaleAfter); it is resubscribed and
	// its next message flagged FlagStale.
	Stale
	// Reorg: a head on Topic does not follow the previous one (an
	// Ethereum node reorganised its chain): Replaced lists the hashes no
	// longer canonical, oldest first, Depth how many; the head is
	// flagged FlagReorg.
	Reorg
	// SwitchedBack: the connection moved to the preferred endpoint,
	// Endpoint, make before break (WithSwitchBack): nothing was lost.
	SwitchedBack
	// Moved: the connection moved to the first endpoint of a new list,
	// make before break (Client.SetEndpoints): nothing was lost.
	Moved
)

func (k EventKind) String() string {
	switch k {
	case Connected:
		return "connected"
	case Disconnected:
		return "disconnected"
	case Reconnecting:
		return "reconnecting"
	case Resubscribed:
		return "resubscribed"
	case Gap:
		return "gap"
	case ServerNotice:
		return "server-notice"
	case SlowConsumer:
		return "slow-consumer"
	case Lagging:
		return "lagging"
	case Stale:
		return "stale"
	case Reorg:
		return "reorg"
	case SwitchedBack:
		return "switched-back"
	case Moved:
		return "moved"
	}
	return fmt.Sprintf("EventKind(%d)", k)
}

// Event reports a change of the connection or of a stream's integrity.
type Event struct {
	Kind    EventKind     // what happened
	Time    time.Time     // when it happened
	Err     error         // Disconnected, Reconnecting: the cause
	Attempt int           // Reconnecting
	Wait    time.Duration // Reconnecting: the backoff before the next dial
	Topic   string        // Gap, SlowConsumer, Stale
	Topics  int           // Resubscribed
	Dropped uint64        // SlowConsumer: the subscription's drops so far
	Lag     time.Duration // Lagging: the ping's round trip
	// Reorg: how many blocks were replaced, and their hashes, oldest
	// first.
	Depth    int
	Replaced []string
	// Connection is the index of the Pool connection the event came
	// from (0 for a Client's).
	Connection int
	// Endpoint is the index of the endpoint (WithEndpoints) dialled next
	// (Reconnecting) or connected to (Connected): 0 for Dial's URL.
	Endpoint int

	// Subscription is the subscription that dropped (SlowConsumer).
	Subscription *Subscription
}

func (e Event) String() string {
	switch e.Kind {
	case Disconnected:
		return fmt.Sprintf("disconnected: %v", e.Err)
	case Reconnecting:
		return fmt.Sprintf("reconnecting (attempt %d in %v): %v", e.Attempt, e.Wait, e.Err)
	case Resubscribed:
		return fmt.Sprintf("resubscribed %d topics", e.Topics)
	case Gap:
		return fmt.Sprintf("gap on %s", e.Topic)
	case SlowConsumer:
		return fmt.Sprintf("slow consumer on %s: %d dropped", e.Topic, e.Dropped)
	case Lagging:
		return fmt.Sprintf("lagging: ping round trip %v", e.Lag.Round(time.Millisecond))
	case Stale:
		return fmt.Sprintf("stale: %s silent while others flow; resubscribed", e.Topic)
	case Reorg:
		return fmt.Sprintf("reorg on %s: %d blocks replaced", e.Topic, e.Depth)
	}
	return e.Kind.String()
}
