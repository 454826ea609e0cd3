// Package recovery is the client's pluggable recoverer: it fills in what
// a topic missed while its connection was away, where the venue does not
// replay it (protocol.Recoverer: an Ethereum node's subscriptions), and
// follows a chain topic's links (protocol.MessageReader.Link: its
// newHeads) to flag the heads a reorganisation replaced.
//
// An Ethereum node's subscriptions do not replay: the heads it made while
// the client was reconnecting never arrive on the new subscription. For a
// Backfill topic the client's supervisor asks its Recovery, on the new
// connection and before handing it out, to fetch them and deliver them in
// order, marked Backfilled, before the live ones: while it does, the
// topic's live messages are held (Topic.Pass, on the reader), and
// released after, without the ones the backfill delivered already (the
// seam). Beyond the bound (client.WithBackfill), or when the fetch fails,
// nothing is fetched and the first live message is marked Gap, the missed
// range logged.
//
// The package knows nothing of the client: it reaches it through a Host,
// for the client's message type M.
package recovery

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/wsfan/wsfan/internal/chain"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// Mark is what a Recovery sets on (or clears from) a message; the Host
// names each as one of its own flags.
type Mark uint8

const (
	// Backfilled: fetched after a reconnect, not received live.
	Backfilled Mark = 1 << iota
	// Reconnected: the first message of the topic after a reconnect.
	Reconnected
	// Gap: messages before it are missing (the fetch failed or was too
	// long).
	Gap
	// Reorg: a head whose parent is not the previous head.
	Reorg
)

// Host is the client a Recovery serves, for messages of type M. Its
// methods are called on the goroutine that calls the Recovery: the
// reader (Data, Mark, Reorg) or the supervisor (all of them).
type Host[M any] interface {
	// Data is m's payload.
	Data(m M) []byte
	// Mark returns m with set set and clear cleared. Messages go by
	// value, so that the reader's message does not escape to the heap.
	Mark(m M, set, clear Mark) M
	// Fetched makes the message of topic a fetch returned, read at now.
	Fetched(topic string, data []byte, marks Mark, now time.Time) M
	// Call makes a call on the connection being restored.
	Call(ctx context.Context, method string, params json.RawMessage) ([]byte, error)
	// Batch makes calls in one batch: each call's result or error, or
	// the batch's own failure.
	Batch(ctx context.Context, calls []protocol.Call) (results []json.RawMessage, errs []error, err error)
	// RangeTooLarge reports whether err refuses a range for the size of
	// its answer (protocol.ErrorClass.RangeTooLarge).
	RangeTooLarge(err error) bool
	// Reorg tells the program that head on topic replaced the blocks
	// (hashes, oldest first) the chain held; deep when more than it keeps.
	Reorg(topic string, head uint64, replaced []string, deep bool)
	// Topics yields the state of every Backfill topic the client holds
	// (an iter.Seq).
	Topics(yield func(*Topic[M]) bool)
}

// Recovery is one client's recoverer. Any goroutine may use it; each
// Topic's methods say whose they are.
type Recovery[M any] struct {
	host  Host[M]
	rec   protocol.Recoverer     // nil: nothing is fetched, places only from links
	links protocol.MessageReader // nil: no chains, no identities
	most  int                    // the bound of a fetch, in the venue's unit; 0: none
	seed  maphash.Seed           // of the identities a backfill delivered (Topic.fetched)
	log   *zap.Logger
}

// New is the recovery of a client of venue, fetching at most most of the
// venue's units (blocks) after a reconnect (0: none; places and chains
// are still followed).
func New[M any](host Host[M], venue protocol.Venue, most int, log *zap.Logger) *Recovery[M] {
	return &Recovery[M]{host: host, rec: venue.Recoverer, links: venue.Messages, most: most, seed: maphash.MakeSeed(), log: log}
}

// Topic is one Backfill topic's place, its chain and the live messages
// held while its missed ones are fetched. pos is written by the reader
// and the supervisor; holding, seam and fetched are set by the
// supervisor, seam and fetched cleared by whoever delivers the topic;
// mu protects held.
type Topic[M any] struct {
	r       *Recovery[M]
	t       *protocol.Topic
	deliver func(M) // hands a message to the topic's subscriptions
	taken   func()  // a fetched message took the reconnect mark from the live ones

	pos     atomic.Uint64
	holding atomic.Bool
	// seam is the last position the last backfill delivered, while no
	// live message past it has come yet (0: none), and fetched the
	// identities of what it delivered: a live message at or before the
	// seam that the backfill delivered (a head the chain holds, or where
	// no chain is followed (logs) one among fetched) is a late copy.
	seam    atomic.Uint64
	fetched atomic.Pointer[map[uint64]struct{}]
	mu      sync.Mutex
	held    []M
	// chain follows a chaining topic's heads; owned by whoever delivers
	// the topic: the reader, or the supervisor while it holds.
	chain *chain.Follower
}

// chainKeep is how many heads a chaining topic remembers: a reorg deeper
// than that is still flagged, as deep.
const chainKeep = 64

// NewTopic is the state of t, a Backfill topic: deliver hands a message
// to its subscriptions, taken clears the client's mark of its first
// message after a reconnect, which a fetched message carries instead.
func (r *Recovery[M]) NewTopic(t *protocol.Topic, deliver func(M), taken func()) *Topic[M] {
	return &Topic[M]{r: r, t: t, deliver: deliver, taken: taken}
}

// Place is the topic's last position, 0 before its first.
func (tt *Topic[M]) Place() uint64 { return tt.pos.Load() }

// SetPlace moves the topic's place to pos, as if it had delivered a
// message there (a copy another connection delivered).
func (tt *Topic[M]) SetPlace(pos uint64) { tt.pos.Store(pos) }

// Pass is the reader's check of a message of the topic: while the topic
// is held it waits and Pass reports false; a late copy of what the last
// backfill delivered (see place) is dropped, and Pass reports false;
// else Pass records its place (and its link in the chain) and returns it,
// marked Reorg where it is one, with its place (0: none read) and true.
func (tt *Topic[M]) Pass(m M) (M, uint64, bool) {
	if tt.holding.Load() {
		tt.mu.Lock()
		if tt.holding.Load() {
			tt.held = append(tt.held, m)
			tt.mu.Unlock()
			return m, 0, false
		}
		tt.mu.Unlock()
	}
	return tt.place(m)
}

// place records m's place, and for a chain (heads) its link, marking a
// reorg: one scan of the message for both. It reports false for a late
// copy of what the last backfill delivered, not to be delivered again: a
// message at or before the backfill's last position (inSeam) that it
// delivered, a head the chain holds or a log among its identities (a
// reorg's new head or log at the same place, or a retraction, is none).
// A node's subscription can announce the last blocks a backfill fetched
// after the backfill: the node may answer for its current block before
// it announces that block. It returns m's place too (0: none read).
func (tt *Topic[M]) place(m M) (M, uint64, bool) {
	r := tt.r
	data := r.host.Data(m)
	if r.links != nil && !tt.t.Retracts {
		if number, reorg, repeat, ok := tt.follow(data); ok {
			if tt.inSeam(number) && repeat {
				return m, 0, false
			}
			if reorg {
				m = r.host.Mark(m, Reorg, 0)
			}
			tt.pos.Store(number)
			return m, number, true
		}
	}
	if r.rec == nil {
		return m, 0, true
	}
	pos, ok := r.rec.Position(tt.t, data)
	if !ok {
		return m, 0, true
	}
	if tt.inSeam(pos) && tt.wasFetched(data) {
		return m, 0, false
	}
	tt.pos.Store(pos)
	return m, pos, true
}

// inSeam reports whether pos is at or before the last backfill's seam,
// while it is open; a position past it closes it: from then on nothing
// is taken for a late copy.
func (tt *Topic[M]) inSeam(pos uint64) bool {
	seam := tt.seam.Load()
	if seam == 0 {
		return false
	}
	if pos > seam {
		tt.seam.Store(0)
		tt.fetched.Store(nil)
		return false
	}
	return true
}

// wasFetched reports whether the last backfill delivered a message of
// data's identity.
func (tt *Topic[M]) wasFetched(data []byte) bool {
	ids := tt.fetched.Load()
	if ids == nil {
		return false
	}
	_, ok := (*ids)[tt.r.identity(data)]
	return ok
}

// identity is a hash of what identifies data within its topic: the
// venue's identity (MessageReader.AppendIdentity: a log's block hash,
// index and removed flag), else the whole message.
func (r *Recovery[M]) identity(data []byte) uint64 {
	id := data
	if r.links != nil {
		if b, ok := r.links.AppendIdentity(nil, data); ok {
			id = b
		}
	}
	return maphash.Bytes(r.seed, id)
}

// follow adds data, a head of a chaining topic, to the topic's chain; a
// head whose parent is not the previous head is a reorg, reported to the
// host with the blocks it replaced; a head the chain holds already is a
// repeat. It returns the head's number.
func (tt *Topic[M]) follow(data []byte) (number uint64, reorg, repeat, ok bool) {
	number, hash, parent, ok := tt.r.links.Link(data)
	if !ok {
		return 0, false, false, false
	}
	if tt.chain == nil {
		tt.chain = chain.New(chainKeep)
	}
	out := tt.chain.Apply(chain.Link{Number: number, Hash: hash, Parent: parent})
	if !out.Reorg {
		return number, false, out.Repeat, true
	}
	replaced := make([]string, len(out.Replaced))
	for i, l := range out.Replaced {
		replaced[i] = "0x" + hex.EncodeToString(l.Hash[:])
	}
	tt.r.host.Reorg(tt.t.Name, number, replaced, out.Deep)
	return number, true, false, true
}

// passHeld is Pass for a message the supervisor delivers (fetched or
// held): its place and link, then its delivery, unless it is a late copy
// (place); it reports whether it delivered it.
func (tt *Topic[M]) passHeld(m M) bool {
	m, _, ok := tt.place(m)
	if ok {
		tt.deliver(m)
	}
	return ok
}

// Hold holds the live messages of tt (a topic the client had confirmed)
// when it has a known place and a backfill would fetch what it misses,
// before a restore subscribes it again; it reports whether it holds it.
// Runs on the supervisor.
func (r *Recovery[M]) Hold(tt *Topic[M]) bool {
	if r.rec == nil || r.most == 0 || tt.pos.Load() == 0 {
		return false
	}
	tt.holding.Store(true)
	return true
}

// Let releases held topics without fetching anything, after a restore
// that failed: the next connection holds them again.
func (r *Recovery[M]) Let(held []*Topic[M]) {
	for _, tt := range held {
		tt.release(nil, false)
	}
}

// Recover fetches and delivers what each held topic missed, then
// releases its live messages, and sets the starting place of every
// topic that has none yet (baseline). Runs on the supervisor, during
// connect.
func (r *Recovery[M]) Recover(ctx context.Context, held []*Topic[M]) {
	if r.rec == nil || r.most == 0 || len(held) == 0 && len(r.unplaced()) == 0 {
		return
	}
	cur := r.rec.Current()
	res, err := r.host.Call(ctx, cur.Method, cur.Params)
	for _, tt := range held {
		current, perr := r.currentOf(tt, res, err)
		last := tt.pos.Load()
		switch {
		case perr != nil:
			r.log.Warn("could not backfill: the first live message is flagged as a gap", zap.String("topic", tt.t.Name), zap.Error(perr))
			tt.release(nil, true)
		case current <= last:
			tt.release(nil, false)
		default:
			msgs, ferr := tt.fetchMissed(ctx, last, current)
			if ferr != nil {
				r.log.Warn("could not backfill: the first live message is flagged as a gap", zap.String("topic", tt.t.Name),
					zap.Uint64("after", last), zap.Uint64("through", current), zap.Error(ferr))
			}
			tt.release(msgs, ferr != nil)
		}
	}
	if err == nil {
		r.baseline(res)
	}
}

// currentOf reads the current position of tt from the Current call's
// result (or its error).
func (r *Recovery[M]) currentOf(tt *Topic[M], res []byte, err error) (uint64, error) {
	if err != nil {
		return 0, err
	}
	return r.rec.ParseCurrent(tt.t, res)
}

// unplaced lists the sparse topics (Retracts: logs, which may deliver
// nothing for long) that have no place yet. A dense one (heads) gets its
// place from its first message.
func (r *Recovery[M]) unplaced() []*Topic[M] {
	var out []*Topic[M]
	for tt := range r.host.Topics {
		if tt.t.Retracts && tt.pos.Load() == 0 {
			out = append(out, tt)
		}
	}
	return out
}

// baseline sets the place of every sparse topic that has none (it has
// delivered nothing yet) to the current one: a later outage is then
// backfilled from there. Anything before it the subscription never owed.
func (r *Recovery[M]) baseline(current []byte) {
	for _, tt := range r.unplaced() {
		if pos, err := r.rec.ParseCurrent(tt.t, current); err == nil {
			tt.pos.CompareAndSwap(0, pos)
		}
	}
}

// Baseline sets the place of the sparse topics a subscribe just opened
// (fresh), with one Current call: only a subscribe of such a topic (an
// Ethereum logs filter) pays it.
func (r *Recovery[M]) Baseline(ctx context.Context, fresh []*Topic[M]) {
	if r.rec == nil || r.most == 0 {
		return
	}
	for _, tt := range fresh {
		if tt.t.Retracts {
			cur := r.rec.Current()
			if res, err := r.host.Call(ctx, cur.Method, cur.Params); err == nil {
				r.baseline(res)
			}
			return
		}
	}
}

// fetchMissed fetches the messages of the topic after position after
// through through, in order, marked Backfilled, the first also
// Reconnected. A range longer than the bound is an error.
func (tt *Topic[M]) fetchMissed(ctx context.Context, after, through uint64) ([]M, error) {
	data, err := tt.fetchRange(ctx, after, through, 0)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	msgs := make([]M, len(data))
	for i, d := range data {
		marks := Backfilled
		if i == 0 {
			marks |= Reconnected
		}
		msgs[i] = tt.r.host.Fetched(tt.t.Name, d, marks, now)
	}
	tt.r.log.Info("backfilled", zap.String("topic", tt.t.Name), zap.Uint64("after", after), zap.Uint64("through", through), zap.Int("messages", len(msgs)))
	return msgs, nil
}

// maxSplits bounds how often a refused range is halved: 2^16 parts.
const maxSplits = 16

// fetchRange fetches the messages after position after through through.
// A range the server refuses for the size of its answer (protocol
// ErrorClass.RangeTooLarge) is fetched as its two halves.
func (tt *Topic[M]) fetchRange(ctx context.Context, after, through uint64, splits int) ([][]byte, error) {
	r := tt.r
	if d := r.rec.Distance(tt.t, after, through); d > uint64(r.most) {
		return nil, fmt.Errorf("missed %d blocks, more than the backfill bound of %d (WithBackfill)", d, r.most)
	}
	raws, errs, err := r.host.Batch(ctx, r.rec.Fetch(tt.t, after, through))
	if err != nil {
		return nil, err
	}
	results := make([][]byte, len(raws))
	for i, err := range errs {
		if err != nil {
			if r.host.RangeTooLarge(err) && through-after > 1 && splits < maxSplits {
				mid := after + (through-after)/2
				first, err := tt.fetchRange(ctx, after, mid, splits+1)
				if err != nil {
					return nil, err
				}
				second, err := tt.fetchRange(ctx, mid, through, splits+1)
				return append(first, second...), err
			}
			return nil, err
		}
		results[i] = raws[i]
	}
	return r.rec.Messages(tt.t, after, through, results)
}

// release delivers the fetched messages, then the held live ones but
// those the fetch delivered already (late copies: place), and lets the
// reader deliver again, the seam still open for the late copies it may
// read. With gap, the first live message is marked Gap; after fetched
// ones, no live one is marked Reconnected (the hole is filled), whether
// it came while they were fetched or after.
func (tt *Topic[M]) release(fetched []M, gap bool) {
	r := tt.r
	tt.seam.Store(0) // the last backfill's: the fetched ones are past it
	tt.fetched.Store(nil)
	if len(fetched) > 0 {
		tt.taken() // the first fetched one carries the mark
	}
	var seam uint64
	var ids map[uint64]struct{}
	for _, m := range fetched {
		tt.passHeld(m)
		data := r.host.Data(m)
		if pos, ok := r.rec.Position(tt.t, data); ok {
			seam = pos
		}
		if ids == nil {
			ids = make(map[uint64]struct{}, len(fetched))
		}
		ids[r.identity(data)] = struct{}{} // what tells a copy where no chain does
	}
	if seam != 0 {
		tt.fetched.Store(&ids)
		tt.seam.Store(seam)
	}
	for first := true; ; {
		tt.mu.Lock()
		held := tt.held
		tt.held = nil
		if len(held) == 0 {
			tt.holding.Store(false)
			tt.mu.Unlock()
			return
		}
		tt.mu.Unlock()
		for _, m := range held {
			var set, clear Mark
			if len(fetched) > 0 {
				clear = Reconnected
			}
			if gap && first {
				set = Gap
			}
			if tt.passHeld(r.host.Mark(m, set, clear)) {
				first = false
			}
		}
	}
}
