package book

import (
	"errors"
	"fmt"
	"iter"
	"sync"
	"sync/atomic"
	"time"
)

// Book is a local L2 order book of one topic, kept by an exchange's
// Rules. One goroutine applies messages (Apply); any number read the book
// at the same time, and every read sees the book between two messages,
// never halfway through one.
//
// A book is valid from its first snapshot on. A break in the exchange's
// chain (a message that does not follow the last one), a crossed book or
// a message the rules cannot read makes it invalid at once: reads then
// report !ok, so a reader never gets a book known to be stale, and
// changes are ignored until the next snapshot (the resync's) makes it
// valid again.
type Book struct {
	topic string
	rules Rules

	// mu: Apply writes under it, readers read under it.
	mu    sync.RWMutex
	bids  side
	asks  side
	seq   int64
	time  time.Time
	valid bool

	u Update // the message being applied; owned by the applying goroutine

	// changed is closed at the book's next change, for Changed's
	// waiters; nil while nobody waits. Under mu.
	changed chan struct{}

	snapshots, changes, ignored, breaks atomic.Uint64
}

// Side is one side of a book.
type Side uint8

const (
	// Bids are the buy orders, best (highest) first.
	Bids Side = iota
	// Asks are the sell orders, best (lowest) first.
	Asks
)

// ErrBreak is wrapped by every *BreakError.
var ErrBreak = errors.New("book: chain broken")

// ErrMalformed is wrapped by the *BreakError of a message the rules
// cannot read: not a book message of the exchange at all.
var ErrMalformed = errors.New("book: not a book message")

// BreakError says why a message left the book invalid.
type BreakError struct {
	Topic  string // the book's topic
	Reason string // what broke the chain
	// Malformed says the message could not be read (ErrMalformed).
	Malformed bool
}

func (e *BreakError) Error() string {
	if e.Malformed {
		return fmt.Sprintf("book %s: %s", e.Topic, e.Reason)
	}
	return fmt.Sprintf("book %s: chain broken: %s", e.Topic, e.Reason)
}

// Unwrap makes errors.Is(err, ErrBreak) hold, and ErrMalformed for a
// message that could not be read.
func (e *BreakError) Unwrap() []error {
	if e.Malformed {
		return []error{ErrBreak, ErrMalformed}
	}
	return []error{ErrBreak}
}

// New returns an empty, invalid book of topic kept by rules.
func New(topic string, rules Rules) *Book {
	return &Book{topic: topic, rules: rules, bids: side{bids: true}}
}

// Topic is the book's topic.
func (b *Book) Topic() string { return b.topic }

// Apply applies one message of the topic: its payload and whether the
// client marked it whole state (client.Message.Snapshot). It returns a
// *BreakError when this message leaves the book invalid (the caller then
// resyncs: one resync per break, since the changes that follow a break
// are ignored without an error until a snapshot comes). Apply is called
// by one goroutine at a time; it allocates nothing once the book has
// held its deepest.
func (b *Book) Apply(payload []byte, marked bool) error {
	u := &b.u
	u.reset()
	if err := b.rules.Parse(payload, marked, u); err != nil {
		b.mu.Lock()
		b.valid = false
		b.notifyLocked()
		b.mu.Unlock()
		b.breaks.Add(1)
		return &BreakError{Topic: b.topic, Reason: err.Error(), Malformed: true}
	}
	if u.Snapshot {
		b.snapshots.Add(1)
		b.mu.Lock()
		b.bids.reset()
		b.asks.reset()
		b.applyLocked(u)
		failed := b.settleLocked(u)
		crossed := b.crossedLocked()
		b.valid = !crossed && failed == ""
		b.notifyLocked()
		b.mu.Unlock()
		if failed != "" {
			b.breaks.Add(1)
			return &BreakError{Topic: b.topic, Reason: failed}
		}
		if crossed {
			b.breaks.Add(1)
			return b.crossedError()
		}
		return nil
	}
	b.mu.RLock()
	valid, last := b.valid, b.seq
	b.mu.RUnlock()
	if !valid {
		b.ignored.Add(1)
		return nil
	}
	if (u.Prev != 0 || u.Chained) && u.Prev != last {
		return b.breakWith(fmt.Sprintf("a change follows %d, the book is at %d", u.Prev, last))
	}
	b.changes.Add(1)
	b.mu.Lock()
	b.applyLocked(u)
	failed := b.settleLocked(u)
	crossed := b.crossedLocked()
	if crossed || failed != "" {
		b.valid = false
	}
	b.notifyLocked()
	b.mu.Unlock()
	if failed != "" {
		b.breaks.Add(1)
		return &BreakError{Topic: b.topic, Reason: failed}
	}
	if crossed {
		b.breaks.Add(1)
		return b.crossedError()
	}
	return nil
}

// ApplyAfterGap is Apply for a message that follows lost messages of
// the topic: the stream has a hole (client.Message.Gap, or a jump in
// client.Message.Seq: a subscription's buffer overflowed, a frame was
// dropped for its size, a relay announced a hole). A book whose changes
// name no predecessor (Thalex's) cannot see the hole itself and would
// apply the change over it: unless the message is a whole book, the
// book turns invalid, and a *BreakError asks for the resync (nil when
// the book was broken already: its resync is under way).
func (b *Book) ApplyAfterGap(payload []byte, marked bool) error {
	was := b.Valid()
	b.Invalidate()
	if err := b.Apply(payload, marked); err != nil || b.Valid() || !was {
		return err
	}
	b.breaks.Add(1)
	return &BreakError{Topic: b.topic, Reason: "messages were lost before this change (a gap in the stream)"}
}

// applyLocked sets u's levels and position. Called with mu held.
func (b *Book) applyLocked(u *Update) {
	for _, l := range u.Bids {
		b.bids.set(l)
	}
	for _, l := range u.Asks {
		b.asks.set(l)
	}
	b.seq, b.time = u.Seq, u.Time
}

// crossedLocked reports whether the best bid reaches the best ask, which
// no exchange's matching engine leaves standing. Called with mu held.
func (b *Book) crossedLocked() bool {
	bid, okb := b.bids.best()
	ask, oka := b.asks.best()
	return okb && oka && !bid.Price.less(ask.Price)
}

func (b *Book) crossedError() error {
	b.mu.RLock()
	bid, _ := b.bids.best()
	ask, _ := b.asks.best()
	b.mu.RUnlock()
	return &BreakError{Topic: b.topic, Reason: fmt.Sprintf("crossed: best bid %s, best ask %s", bid.Price, ask.Price)}
}

// breakWith makes the book invalid for reason.
func (b *Book) breakWith(reason string) error {
	b.mu.Lock()
	was := b.valid
	b.valid = false
	b.notifyLocked()
	b.mu.Unlock()
	if !was {
		b.ignored.Add(1)
		return nil // broken already: its resync is under way
	}
	b.breaks.Add(1)
	return &BreakError{Topic: b.topic, Reason: reason}
}

// Valid reports whether the book is the exchange's (see Book).
func (b *Book) Valid() bool {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.valid
}

// Invalidate marks the book invalid until the next snapshot: the holder
// knows it stale (the connection was lost, the subscription restored).
func (b *Book) Invalidate() {
	b.mu.Lock()
	b.valid = false
	b.notifyLocked()
	b.mu.Unlock()
}

// Changed returns a channel closed at the book's next change: a snapshot
// or a change applied, or the book becoming invalid. A reader waits on it
// rather than polling Seq, then reads the book and asks again:
//
//	for {
//		changed := b.Changed() // before reading, so no change is missed
//		bid, ask, ok := b.Best()
//		...
//		<-changed
//	}
func (b *Book) Changed() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.changed == nil {
		b.changed = make(chan struct{})
	}
	return b.changed
}

// notifyLocked wakes Changed's waiters. Called with mu held for writing.
func (b *Book) notifyLocked() {
	if b.changed != nil {
		close(b.changed)
		b.changed = nil
	}
}

// Best returns the best bid and ask; ok is false while the book is
// invalid or either side is empty.
func (b *Book) Best() (bid, ask Level, ok bool) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	bid, okb := b.bids.best()
	ask, oka := b.asks.best()
	return bid, ask, b.valid && okb && oka
}

// Top appends the best n levels of each side to bids and asks (n <= 0:
// all of them) and returns them; ok is false while the book is invalid.
// Passing the slices of the last call back allocates nothing.
func (b *Book) Top(n int, bids, asks []Level) (_, _ []Level, ok bool) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return appendTop(bids, b.bids.levels, n), appendTop(asks, b.asks.levels, n), b.valid
}

func appendTop(dst, levels []Level, n int) []Level {
	if n > 0 && n < len(levels) {
		levels = levels[:n]
	}
	return append(dst, levels...)
}

// Levels iterates one side best first, under the book's read lock: the
// loop sees one consistent book, and Apply waits until it ends, so keep
// the loop short. It yields nothing while the book is invalid.
func (b *Book) Levels(s Side) iter.Seq[Level] {
	return func(yield func(Level) bool) {
		b.mu.RLock()
		defer b.mu.RUnlock()
		if !b.valid {
			return
		}
		levels := b.bids.levels
		if s == Asks {
			levels = b.asks.levels
		}
		for _, l := range levels {
			if !yield(l) {
				return
			}
		}
	}
}

// Depth counts the levels of each side.
func (b *Book) Depth() (bids, asks int) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return len(b.bids.levels), len(b.asks.levels)
}

// Seq and Time are the exchange's sequence number and timestamp of the
// last message applied.
func (b *Book) Seq() int64 {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.seq
}

// Time is the exchange's timestamp of the last message applied.
func (b *Book) Time() time.Time {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.time
}

// CopyTo fills dst with a consistent copy of the book, reusing dst's
// slices.
func (b *Book) CopyTo(dst *State) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	dst.Topic = b.topic
	dst.Bids = append(dst.Bids[:0], b.bids.levels...)
	dst.Asks = append(dst.Asks[:0], b.asks.levels...)
	dst.Seq, dst.Time, dst.Valid = b.seq, b.time, b.valid
}

// Copy returns a consistent copy of the book.
func (b *Book) Copy() State {
	var s State
	b.CopyTo(&s)
	return s
}

// AppendSnapshot appends the payload of the exchange's snapshot message
// holding the book as it is (Rules.AppendSnapshot), or reports false
// while the book is invalid.
func (b *Book) AppendSnapshot(dst []byte) ([]byte, bool) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if !b.valid {
		return dst, false
	}
	s := State{Topic: b.topic, Bids: b.bids.levels, Asks: b.asks.levels, Seq: b.seq, Time: b.time, Valid: true}
	return b.rules.AppendSnapshot(dst, &s), true
}

// Stats counts what the book applied.
type Stats struct {
	// Snapshots and Changes count the messages applied; Ignored counts
	// the changes dropped while the book waited for a snapshot; Breaks
	// counts the breaks (each one resync).
	Snapshots, Changes, Ignored, Breaks uint64
}

// Stats returns the book's counts.
func (b *Book) Stats() Stats {
	return Stats{Snapshots: b.snapshots.Load(), Changes: b.changes.Load(), Ignored: b.ignored.Load(), Breaks: b.breaks.Load()}
}
