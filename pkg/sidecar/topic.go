package sidecar

import (
	"bytes"
	"errors"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"go.uber.org/zap"

	"github.com/wsfan/wsfan/pkg/book"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// topicConfig is what every topic is built from; the hub holds one.
type topicConfig struct {
	wire    protocol.Server // the local notification frame
	cache   bool            // Config.LastMessageCache
	stats   *stats          // the Server's resume counters
	seq     *atomic.Uint64  // the Server's count of published messages: resume positions
	stream  string          // names this Server's positions in seq (a resuming client's may be another's)
	history historyLimit    // what a topic keeps for resuming clients
	// resync asks the upstream for a topic's whole state again
	// (client.Client.Resync); false when it cannot.
	resync func(topic string) bool
	// noBooks serves book topics as they come, keeping no book: a NATS
	// group relays what its leader receives and cannot resync a book
	// (Config.NATS).
	noBooks bool
	delays  *delays // the Server's delay histograms (delays.go)
	// flagged is told each message that comes with flags
	// (record.Recorder.Flagged: Config.Record keeps what the programs
	// were told); nil without a recording.
	flagged func(client.Message)
	log     *zap.Logger
}

// topic is one upstream subscription shared by every local subscriber of
// it. Its goroutine (hub.run) is the only reader of sub.
type topic struct {
	name     string // the hub's key: upstream, or a twin's key (twins.go)
	upstream string // the topic subscribed upstream
	localID  string // the subscription id local Ethereum clients see
	cfg      topicConfig

	// parsed is upstream as the hub's dialect parsed it (hub.validate),
	// handed to the feed's SubscribeTopics: nothing parses it again.
	parsed *protocol.Topic

	// book is the topic's order book when it is one (book.RulesFor):
	// applied by the pump, read by attach to give a joiner its snapshot.
	book     *book.Book
	firstSeq uint64 // the Server's seq when the topic opened: a resume from before it has a gap

	ready chan struct{} // closed when the upstream subscribe has finished
	err   error         // why it failed; set before ready closes
	sub   client.Stream // set before ready closes, if the subscribe succeeded
	done  chan struct{} // closed when the pump has ended, or the subscribe failed
	// behind is the pump's channel, set before it starts: a message
	// waiting there turns the rest of the current one's offers from
	// writes into queued frames (fanout.go).
	behind <-chan client.Message

	// mu orders attach (and the cached message a joiner gets first)
	// against the pump's publish, so a joiner sees no gap and no repeat.
	mu   sync.Mutex
	subs []*session // copy on write: the pump offers to a snapshot
	// pending are the subscribers of a book that wait for its next
	// snapshot (the book was invalid when they joined): the pump makes
	// them subscribers when one comes, and offers them nothing before.
	pending []*session
	// snap is the exchange's last snapshot payload of a book, copied,
	// while no change has followed it: a joiner gets the exchange's own
	// bytes; nil once a change is applied (the book builds one then).
	snap    []byte
	snapSeq uint64 // the seq of the book's last message: a joiner's position
	// stateful is set once the topic carried a message marked whole
	// state: the last-message cache then holds nothing of it, since a
	// change alone would pass for the state.
	stateful bool
	mended   bool // an invalid UTF-8 message was logged; owned by the pump

	// bookEvents are the /v1/book/stream events of the book, by depth
	// (bookhttp.go).
	bookEvents map[int]*bookEvent
	// encoders are the frames of each encoding (encoding.go) in use,
	// made by the first subscriber of one; users counts its subscribers,
	// waiting ones included.
	encoders [numEncodings]encoder
	users    [numEncodings]int
	kinds    [numEncodings]sessionKind // each encoding's transport
	hist     history
	last     []byte // the last payload, when the cache is on
	lastSeq  uint64 // its seq
	hasLast  bool

	// hub.mu protects the following.
	refs  int
	grace *time.Timer
	gen   uint64 // bumped whenever grace changes, to spot a stale expiry
	dead  bool   // removed from the hub

	lastAt    atomic.Int64 // unix ns when the last message was received upstream
	received  atomic.Uint64
	delivered atomic.Uint64
	dropped   atomic.Uint64
	resumes   atomic.Uint64
	rate      atomic.Uint64 // float64 bits: messages/s over the last sample
	sampled   uint64        // received at the last sample; owned by the sampler
}

// newTopic makes the topic name (a twin's key, or its upstream topic),
// parsed being its upstream topic parsed (hub.validate).
func newTopic(name string, parsed *protocol.Topic, cfg topicConfig) *topic {
	if cfg.log == nil {
		cfg.log = zap.NewNop()
	}
	up := upstreamName(name)
	t := &topic{name: name, upstream: up, parsed: parsed, cfg: cfg, ready: make(chan struct{}), done: make(chan struct{})}
	t.localID = cfg.wire.SubscriptionID()
	if rules := book.RulesFor(cfg.wire.Name(), up); rules != nil && !cfg.noBooks {
		t.book = book.New(up, rules)
		t.stateful = true
	}
	t.hist.limit = cfg.history
	t.firstSeq = cfg.seq.Load()
	return t
}

// fail marks the topic's upstream subscribe failed with err.
func (t *topic) fail(err error) {
	t.err = err
	close(t.done)
	close(t.ready)
}

// pump makes sub the topic's upstream subscription, marks the topic
// ready, and forwards every message of sub to the local subscribers until
// sub ends. It returns why sub ended: nil after an unsubscribe.
func (t *topic) pump(sub client.Stream) error {
	defer close(t.done)
	t.sub = sub
	ch := sub.C()
	t.behind = ch
	close(t.ready)
	var seq uint64 // the last message's Seq
	for m := range ch {
		// A jump in Seq: the upstream subscription dropped messages for
		// room (its overflow policy) or its holder knew them lost. The
		// subscribers hear of the hole as of any other (FlagGap), and a
		// book takes it as a break.
		if seq != 0 && m.Seq > seq+1 {
			m.Flags |= client.FlagGap
		}
		seq = m.Seq
		t.publish(m, len(ch) == 0)
	}
	return <-sub.Err()
}

// publish encodes m once per format and offers the same bytes to every
// subscriber. It never blocks. caughtUp says no message waits behind m:
// then subscribers with nothing queued are written to from here (see
// session.offer); behind a backlog their writers batch instead.
func (t *topic) publish(m client.Message, caughtUp bool) {
	t.received.Add(1)
	t.lastAt.Store(m.RecvTime.UnixNano())
	if !utf8.Valid(m.Data) {
		m.Data = t.mend(m.Data)
	}
	if m.Flags != 0 && t.cfg.flagged != nil {
		t.cfg.flagged(m)
	}
	resumed := m.Flags&client.FlagReconnected != 0
	if resumed {
		t.resumes.Add(1)
		t.cfg.stats.resumes.Add(1)
		t.cfg.stats.lastResume.Store(time.Now().UnixNano())
	}
	snapshot := m.Snapshot()
	seq := t.cfg.seq.Add(1)
	st := t.stamps(m)

	t.mu.Lock()
	// The book takes m under mu, with the subscribers that get m: a late
	// joiner attached (under mu) either before, its snapshot without m and
	// m to follow, or after, its snapshot with m and m not sent it again.
	var broken error
	if t.book != nil {
		if m.Gap() { // messages were lost before m: a book that cannot see the hole must not apply m over it
			broken = t.book.ApplyAfterGap(m.Data, snapshot)
		} else {
			broken = t.book.Apply(m.Data, snapshot)
		}
		if errors.Is(broken, book.ErrMalformed) {
			t.dropBookLocked() // m goes to the subscribers that waited too
		}
	}
	if snapshot {
		t.stateful = true
		if len(t.pending) > 0 { // they waited for this snapshot: it is their first message
			t.subs = append(slices.Clip(t.subs), t.pending...)
			t.pending = nil
		}
	}
	if t.book != nil {
		t.snapSeq = seq
		t.snap = t.snap[:0]
		if snapshot {
			t.snap = append(t.snap, m.Data...)
		} else {
			t.snap = nil
		}
	}
	subs := t.subs
	var frames topicFrames
	var kinds uint8 // the transports m goes to, a bit each
	// A stale message (resubscribed after a silence, or in a NATS group
	// the first of a late run) is a hole too: its notice names the cause.
	hole := resumed || m.Gap() || m.Stale()
	for id, n := range t.users {
		if n == 0 {
			continue
		}
		kinds |= 1 << t.kinds[id]
		frames.message[id], frames.slot[id] = t.encoders[id].live(seq, m.Data, snapshot, resumed, st)
		if hole {
			frames.hole[id] = t.encoders[id].hole(m)
		}
	}
	if t.hist.on {
		t.hist.add(seq, m.Data, resumed)
	}
	if t.cfg.cache && !t.stateful {
		t.last, t.lastSeq, t.hasLast = m.Data, seq, true
	}
	t.mu.Unlock()
	if broken != nil {
		t.broken(broken)
	}
	if t.cfg.delays != nil {
		t.cfg.delays.observe(m, st, kinds)
	}

	if (len(subs) >= parallelOffers || (caughtUp && len(subs) >= parallelDirectOffers)) && runtime.GOMAXPROCS(0) > 1 {
		t.offerParallel(subs, &frames, caughtUp)
		return
	}
	t.offerAll(subs, &frames, caughtUp)
}

// mend replaces each invalid UTF-8 sequence of data with U+FFFD: every
// encoding carries text, and a browser closes its connection on invalid
// UTF-8 in text, losing every topic it held. Counted, and
// logged once per topic. Runs on the pump.
func (t *topic) mend(data []byte) []byte {
	t.cfg.stats.invalidUTF8.Add(1)
	if !t.mended {
		t.mended = true
		t.cfg.log.Warn("upstream message is not valid UTF-8; passing it on with U+FFFD for each invalid sequence (logged once per topic)",
			zap.String("topic", t.name), zap.Int("bytes", len(data)))
	}
	return bytes.ToValidUTF8(data, []byte("\uFFFD"))
}

// broken handles err, a message the topic's book could not apply: when
// it breaks the book's chain, the topic is resynced upstream (once a
// break, since the book ignores the changes that follow until the
// resync's snapshot); when it cannot be read, the topic is served
// without a book from then on (dropBookLocked), which is logged. Runs on
// the pump.
func (t *topic) broken(err error) {
	if errors.Is(err, book.ErrMalformed) {
		t.cfg.log.Error("book messages cannot be read; serving the topic as it comes, without snapshots for late joiners",
			zap.String("topic", t.name), zap.Error(err))
		return
	}
	resynced := t.cfg.resync != nil && t.cfg.resync(t.upstream)
	t.cfg.log.Warn("book broken; resyncing upstream", zap.String("topic", t.name), zap.Error(err), zap.Bool("resync", resynced))
}

// heldBook is the topic's book, or nil when it has none (any more).
func (t *topic) heldBook() *book.Book {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.book
}

// dropBookLocked serves the topic as a plain one from now on: its
// messages are not the exchange's book messages, so nobody waits for a
// snapshot that cannot be read. Called on the pump with t.mu held.
func (t *topic) dropBookLocked() {
	t.book, t.snap, t.stateful = nil, nil, false
	t.subs = append(slices.Clip(t.subs), t.pending...)
	t.pending = nil
}

// attachLocked adds s as a subscriber, queueing the cached last message
// first, a book's snapshot, or what a resuming client missed. Called with
// t.mu held (session.attach).
func (t *topic) attachLocked(s *session) {
	enc := t.use(s)
	if t.book != nil && s.resumeFrom == nil {
		t.attachBookLocked(s, enc)
		return
	}
	next := make([]*session, len(t.subs), len(t.subs)+1)
	copy(next, t.subs)
	t.subs = append(next, s)
	if s.resumeFrom != nil {
		t.replayLocked(s, enc)
		return
	}
	if !t.hasLast {
		return
	}
	t.count(s.offer(enc.message(t.lastSeq, t.last, false, false), false))
}

// use counts s among the users of its encoding and returns the topic's
// encoder of it, made by its first user; a resumable encoding turns the
// history on. Called with t.mu held.
func (t *topic) use(s *session) encoder {
	id := s.enc.id
	if t.encoders[id] == nil {
		t.encoders[id], t.kinds[id] = s.enc.newEncoder(t), s.enc.kind
	}
	t.users[id]++
	if s.enc.resumable {
		t.hist.on = true
	}
	return t.encoders[id]
}

// count counts one offer's outcome.
func (t *topic) count(queued bool) {
	if queued {
		t.delivered.Add(1)
	} else {
		t.dropped.Add(1)
	}
}

// attachBookLocked adds s to a book topic: its first message is the
// book's snapshot, in the exchange's own frame (the exchange's bytes when
// no change has followed them, else built from the book), and the live
// changes follow it. While the book is invalid (no snapshot yet, or a
// resync under way) s waits in pending for the next snapshot. Called
// with t.mu held, so no change falls between the snapshot and the live
// stream.
func (t *topic) attachBookLocked(s *session, enc encoder) {
	payload := t.snap
	if payload == nil {
		var ok bool
		if payload, ok = t.book.AppendSnapshot(nil); !ok {
			t.pending = append(t.pending, s)
			return
		}
	}
	t.count(s.offer(enc.message(t.snapSeq, payload, true, false), false))
	next := make([]*session, len(t.subs), len(t.subs)+1)
	copy(next, t.subs)
	t.subs = append(next, s)
}

// replayLocked queues for a resuming client the messages it missed,
// from the history, preceded by the encoding's mark when the history
// cannot account for all of them: the client's position is not this
// sidecar's, the topic opened after it, or messages after it were dropped
// for room. Called with t.mu held, so the live messages follow without a
// gap or a repeat.
func (t *topic) replayLocked(s *session, enc encoder) {
	from := s.resumeFrom.from
	if !s.resumeFrom.known || t.firstSeq > from || t.hist.evicted > from {
		if mark := enc.lost(); mark != nil {
			s.offer(mark, false)
		}
		if !s.resumeFrom.known {
			return // no position: nothing is known to be missed
		}
	}
	for _, e := range t.hist.after(from) {
		t.count(s.offer(enc.message(e.seq, e.data, false, e.resumed), false))
	}
}

// detach removes s; it reports whether s was attached.
func (t *topic) detach(s *session) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if i := slices.Index(t.pending, s); i >= 0 {
		t.pending = slices.Delete(t.pending, i, i+1)
		t.users[s.enc.id]--
		return true
	}
	for i, x := range t.subs {
		if x == s {
			next := make([]*session, 0, len(t.subs)-1)
			next = append(append(next, t.subs[:i]...), t.subs[i+1:]...)
			t.subs = next
			t.users[s.enc.id]--
			return true
		}
	}
	return false
}

// subscribers returns the attached sessions, those waiting for a book's
// snapshot included.
func (t *topic) subscribers() []*session {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.pending) == 0 {
		return t.subs
	}
	return append(slices.Clip(t.subs), t.pending...)
}

// sample updates the topic's rate. Called by the sampler goroutine only.
func (t *topic) sample(elapsed time.Duration) {
	n := t.received.Load()
	rate := float64(n-t.sampled) / elapsed.Seconds()
	t.sampled = n
	t.rate.Store(math.Float64bits(rate))
}

// status returns the topic's line of /v1/status; refs is its reference
// count, read under hub.mu.
func (t *topic) status(refs int) TopicStatus {
	ts := TopicStatus{
		Topic:     t.upstream,
		LocalID:   t.localID,
		Refs:      refs,
		Rate:      math.Float64frombits(t.rate.Load()),
		Received:  t.received.Load(),
		Delivered: t.delivered.Load(),
		Dropped:   t.dropped.Load(),
		Resumes:   t.resumes.Load(),
	}
	if ns := t.lastAt.Load(); ns > 0 {
		last := time.Unix(0, ns)
		ts.LastMessage = &last
		ts.AgeSeconds = time.Since(last).Seconds()
	}
	select {
	case <-t.ready:
		if t.sub != nil {
			ts.UpstreamDropped = t.sub.Dropped()
		}
	default:
	}
	if b := t.heldBook(); b != nil {
		ts.Book = bookStatus(b)
	}
	return ts
}

// bookStatus describes b for /v1/status.
func bookStatus(b *book.Book) *BookStatus {
	bs := &BookStatus{Valid: b.Valid(), Seq: b.Seq(), Breaks: b.Stats().Breaks}
	bs.BidLevels, bs.AskLevels = b.Depth()
	bids, asks, _ := b.Top(1, nil, nil)
	if len(bids) > 0 {
		bs.BestBid = bids[0].Price.String()
	}
	if len(asks) > 0 {
		bs.BestAsk = asks[0].Price.String()
	}
	if len(bids) > 0 && len(asks) > 0 {
		bs.Mid = bids[0].Price.Add(asks[0].Price).Half().String()
		bs.Spread = asks[0].Price.Sub(bids[0].Price).String()
	}
	return bs
}
