package client

import (
	"sync/atomic"

	"github.com/wsfan/wsfan/internal/cadence"
	"github.com/wsfan/wsfan/internal/recovery"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// topicState is one topic subscribed on the server, shared by every
// subscription that asked for it.
type topicState struct {
	name  string
	topic *protocol.Topic // encoded once, reused on every reconnect

	// subs is replaced (copy on write) under Client.mu and read by the
	// reader goroutine without locking.
	subs atomic.Pointer[[]*Subscription]

	// resumed is set between connections; the reader clears it and flags
	// the first message on the new connection.
	resumed atomic.Bool
	// lost is set when a dropped oversized frame belonged to the topic
	// (conn.markLost); the reader clears it and flags the next message
	// FlagGap.
	lost atomic.Bool
	// stale is set when the topic was found stale and resubscribed
	// (stale.go), or a sidecar's gap notice said so; the reader clears
	// it and flags the next message FlagStale.
	stale atomic.Bool
	// backfilled is set by a sidecar's "backfilled" notice (gapnotice.go):
	// the next message is the first the sidecar fetched after a
	// reconnect, flagged as a direct connection's first fetched one. The
	// reader clears it.
	backfilled atomic.Bool
	// cadence is the topic's arrival rhythm, for finding it stale.
	cadence cadence.Rhythm
	// delay is the topic's share of the histogram of the venue's stamps'
	// age, set by the first delivery that observes one (delays.go).
	delay atomic.Pointer[topicDelay]

	// refreshing is set while a resubscribe for a fresh snapshot is in
	// flight; refreshAgain asks for one more after it (Client.Resync).
	refreshing   atomic.Bool
	refreshAgain atomic.Bool
	// resubscribed is set when a refresh's subscribe is answered: the
	// next sequenced message starts the topic over (the exchange's fresh
	// snapshot), whether or not it names a previous change.
	resubscribed atomic.Bool
	// lastResync (unix ns) is when the last refresh went out, and
	// resyncWait the wait before a refresh that follows it closely, for
	// a dialect that spaces them (protocol.Venue.Resync); the refresh
	// goroutine writes both (resyncpace.go).
	lastResync atomic.Int64
	resyncWait atomic.Int64

	// Client.mu protects the following.
	key       string        // routing key on the current connection
	confirmed bool          // acknowledged once: restored on reconnect
	queued    bool          // subscribed before the first connection: sent by its restore
	removed   bool          // no longer in Client.topics
	index     int           // position in Client.topics.list
	ready     chan struct{} // closed once the first subscribe is answered
	err       error         // why the first subscribe failed; set before ready closes

	// Owned by the reader goroutine (reset by the supervisor between
	// connections, when no reader runs).
	lastID uint64

	// rec is a Backfill topic's part of the client's recovery (its
	// place, its chain, the live messages held while its missed ones are
	// fetched: recovery.go); nil for any other topic. Set at creation.
	rec *recovery.Topic[Message]
}

func newTopicState(t *protocol.Topic) *topicState {
	return &topicState{name: t.Name, topic: t, key: t.Key, ready: make(chan struct{})}
}

// attach adds s to the topic. Called with Client.mu held.
func (ts *topicState) attach(s *Subscription) {
	var next []*Subscription
	if cur := ts.subs.Load(); cur != nil {
		next = append(next, *cur...)
	}
	next = append(next, s)
	ts.subs.Store(&next)
}

// detach removes s and reports how many subscriptions remain. Called with
// Client.mu held.
func (ts *topicState) detach(s *Subscription) int {
	cur := ts.subs.Load()
	if cur == nil {
		return 0
	}
	next := make([]*Subscription, 0, len(*cur))
	for _, x := range *cur {
		if x != s {
			next = append(next, x)
		}
	}
	if len(next) == 0 {
		ts.subs.Store(nil)
		return 0
	}
	ts.subs.Store(&next)
	return len(next)
}
