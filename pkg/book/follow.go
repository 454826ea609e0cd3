package book

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/wsfan/wsfan/pkg/client"
)

// Follower keeps the Book of one topic from a client subscription: its
// goroutine applies each message as it arrives, and on a break asks the
// client for a fresh snapshot (client.Client.Resync), one resync a break.
// The Book's read methods are the Follower's; they are safe from any
// goroutine.
type Follower struct {
	*Book
	c      *client.Client
	sub    *client.Subscription
	events chan Event
	done   chan struct{} // closed when the goroutine ends
	err    error         // why the subscription ended; set before done closes

	resyncs atomic.Uint64
}

// EventKind says what happened to a followed book.
type EventKind uint8

const (
	// Synced: a snapshot made the book valid (the first, or a resync's),
	// or a message the rules read whole turned it valid (a channel
	// whose every message is the whole book, unmarked: OKX books5).
	// The zero EventKind is none of them.
	Synced EventKind = iota + 1
	// Broken: a message broke the chain, crossed the book or followed
	// lost messages (Book.ApplyAfterGap); the book is invalid until the
	// resync's snapshot. Event.Err says why.
	Broken
)

func (k EventKind) String() string {
	switch k {
	case Synced:
		return "synced"
	case Broken:
		return "broken"
	}
	return fmt.Sprintf("EventKind(%d)", uint8(k))
}

// Event is something that happened to a followed book.
type Event struct {
	Kind EventKind // what happened
	Err  error     // a Broken book's *BreakError
	// Resynced says a resync was asked for (false while one is already
	// under way, or the client is not connected: the restore after the
	// reconnect brings the snapshot then).
	Resynced bool
}

func (e Event) String() string {
	switch {
	case e.Kind == Broken && e.Err != nil:
		return fmt.Sprintf("broken: %v (resync asked: %v)", e.Err, e.Resynced)
	case e.Kind == Broken:
		return fmt.Sprintf("broken (resync asked: %v)", e.Resynced)
	}
	return e.Kind.String()
}

// eventBuffer is how many events wait for a reader before the oldest are
// dropped: a book never waits for its reader.
const eventBuffer = 16

// Follow subscribes topic on c and keeps its book until Close or until
// the subscription ends (Done). topic must be a book of c's exchange
// (RulesFor): Deribit book.{instrument}.{interval} and grouped books,
// Thalex book.{instrument}.{grouping}.{nlevels}.{delay}, Ethereal
// L2Book:{symbol}, OKX books:{instId}, books-l2-tbt:{instId},
// books50-l2-tbt:{instId}, books5:{instId} and bbo-tbt:{instId}; its
// exchange package must be imported (registered).
func Follow(ctx context.Context, c *client.Client, topic string) (*Follower, error) {
	dialect := c.Protocol().Name()
	rules := RulesFor(dialect, topic)
	if rules == nil {
		return nil, fmt.Errorf("book: %q is not a book of %s (is its exchange package imported?)", topic, dialect)
	}
	sub, err := c.Subscribe(ctx, []string{topic})
	if err != nil {
		return nil, err
	}
	f := &Follower{Book: New(topic, rules), c: c, sub: sub, events: make(chan Event, eventBuffer), done: make(chan struct{})}
	go f.run()
	return f, nil
}

// run applies the subscription's messages until it ends. It is the
// Follower's goroutine and the Book's only writer.
func (f *Follower) run() {
	defer close(f.done)
	var seq uint64 // the last message's Seq
	for m := range f.sub.C() {
		// A channel whose every message is the whole book (OKX books5,
		// Deribit's grouped books) is not marked snapshot by the client:
		// its rules read it whole, and the book turning valid says so.
		wasValid := f.Valid()
		var err error
		// Messages lost before this one (the subscription's buffer
		// overflowed, or the client flagged a gap) break a book that
		// cannot see the hole itself.
		if m.Gap() || seq != 0 && m.Seq > seq+1 {
			err = f.ApplyAfterGap(m.Data, m.Snapshot())
		} else {
			err = f.Apply(m.Data, m.Snapshot())
		}
		seq = m.Seq
		switch {
		case err != nil:
			resynced := f.c.Resync(f.Topic())
			if resynced {
				f.resyncs.Add(1)
			}
			f.emit(Event{Kind: Broken, Err: err, Resynced: resynced})
		case (m.Snapshot() || !wasValid) && f.Valid():
			f.emit(Event{Kind: Synced})
		case m.Reconnected() && !m.Snapshot():
			// A restore whose first message is not a snapshot: what the
			// book holds may be stale; wait for the next one.
			f.Invalidate()
		}
	}
	f.err = <-f.sub.Err()
}

// emit queues ev, dropping the oldest event when the reader is behind.
func (f *Follower) emit(ev Event) {
	for {
		select {
		case f.events <- ev:
			return
		default:
		}
		select {
		case <-f.events:
		default:
		}
	}
}

// Events delivers what happens to the book: syncs and breaks. It is never
// closed; the oldest events are dropped when it is not read.
func (f *Follower) Events() <-chan Event { return f.events }

// Resyncs counts the resyncs the Follower asked for.
func (f *Follower) Resyncs() uint64 { return f.resyncs.Load() }

// Done is closed when the Follower has stopped: after Close, or when the
// subscription ended (Err says why).
func (f *Follower) Done() <-chan struct{} { return f.done }

// Err is why the subscription ended, once Done is closed; nil after
// Close.
func (f *Follower) Err() error {
	<-f.done
	return f.err
}

// Close unsubscribes the topic and waits for the Follower's goroutine.
// The book keeps its last state, marked invalid.
func (f *Follower) Close(ctx context.Context) error {
	err := f.sub.Unsubscribe(ctx)
	<-f.done
	f.Invalidate()
	return err
}
