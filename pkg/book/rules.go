package book

import (
	"sync"
	"time"
)

// Update is one book message as an exchange's Rules read it.
type Update struct {
	// Snapshot says the message is the whole book: its levels replace
	// the book's.
	Snapshot bool
	// Seq is the exchange's sequence number of the message (Deribit
	// change_id, Ethereal t); 0 when the exchange numbers none (Thalex).
	Seq int64
	// Prev is the sequence number of the message this one follows
	// (Deribit prev_change_id, Ethereal pt); 0 when there is no chain to
	// check, unless Chained says the message names 0 itself.
	Prev int64
	// Chained says the message names the one it follows even where Prev
	// is 0: a venue whose sequence numbers start at 0 (OKX's seqId,
	// "the smallest possible sequence ID value is 0") must not have a
	// change that follows message 0 taken for one that follows nothing.
	Chained bool
	// Time is the exchange's timestamp of the message.
	Time time.Time
	// Checksum is the exchange's digest of the book the message leaves,
	// which a Verifying Rules checks (Kraken's CRC32); 0 elsewhere.
	Checksum uint64
	// Bids and Asks are the levels set; a zero Size removes the price.
	Bids, Asks []Level
}

// reset empties u for the next message, keeping its room.
func (u *Update) reset() {
	*u = Update{Bids: u.Bids[:0], Asks: u.Asks[:0]}
}

// State is a consistent copy of a book.
type State struct {
	// Topic is the book's topic, as subscribed.
	Topic string
	// Bids and Asks are the levels, best first.
	Bids, Asks []Level
	// Seq and Time are the exchange's sequence number and timestamp of
	// the last message applied.
	Seq  int64
	Time time.Time
	// Valid is false until the first snapshot, and from a break in the
	// chain until the resync's snapshot: the levels are then not the
	// exchange's book.
	Valid bool
}

// Rules read and write one exchange's book messages for one topic. Each
// exchange package that has books implements them, beside the
// documentation they follow, and registers them (Register).
type Rules interface {
	// Parse reads a book message's payload (client.Message.Data) into u,
	// whose slices it reuses. marked is the client's FlagSnapshot: the
	// exchange marked the message whole state where the payload itself
	// may not say so (Thalex's top-level snapshot:true).
	Parse(payload []byte, marked bool, u *Update) error
	// AppendSnapshot appends the payload of the message the exchange
	// sends a new subscriber: s's levels, sequence and time, in the
	// exchange's own frame, so a program cannot tell it from the
	// exchange's.
	AppendSnapshot(dst []byte, s *State) []byte
}

// RulesFunc returns the Rules of topic, or nil when topic is not a book.
type RulesFunc func(topic string) Rules

var registry sync.Map // dialect name → RulesFunc

// Register makes an exchange's book rules known by its dialect name
// (protocol.Protocol.Name): each exchange package that has books calls it
// from its registration, beside protocol.Register.
func Register(dialect string, rules RulesFunc) { registry.Store(dialect, rules) }

// RulesFor returns the Rules of topic in dialect, or nil when the topic
// is not a book of a registered exchange.
func RulesFor(dialect, topic string) Rules {
	f, ok := registry.Load(dialect)
	if !ok {
		return nil
	}
	return f.(RulesFunc)(topic)
}
