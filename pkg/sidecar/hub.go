package sidecar

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"

	"github.com/wsfan/wsfan/internal/format"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// hub reference-counts upstream subscriptions: the first local subscriber
// of a topic opens it, and the last one leaving starts a grace timer whose
// expiry closes it. The topics one local request opens are subscribed
// upstream together, with those of any other request that came within
// a few milliseconds (a round: open), then each has one goroutine, started
// by the hub, running its pump until the upstream subscription ends. The
// hub is built from the values it needs, so it is tested alone with any
// feed.
type hub struct {
	// Set by newHub, read only after.
	ctx      context.Context               // ends upstream subscribes and unsubscribes when the Server closes
	cfg      *Config                       // MaxTopics, Grace, RequestTimeout
	live     *atomic.Pointer[liveSettings] // the offered topics and MaxTopicsPerClient, as last reloaded
	proto    protocol.Protocol
	feed     func(context.Context) (client.Holder, error) // the source's (source.feed)
	topicCfg topicConfig
	twins    bool   // the dialect acknowledges subscriptions with ids: a connection may hold twins (twins.go)
	stats    *stats // the refusals' counters
	tracer   tracer // the spans of subscribe rounds (Config.TracerProvider)
	log      *zap.Logger

	// mu protects the following and every topic's refs, grace, gen, dead.
	mu      sync.Mutex
	topics  map[string]*topic
	byLocal map[string]*topic // Ethereum local subscription id → topic
	closed  bool

	// wg counts the topics' goroutines, the gathered round's timer and
	// pending grace expiries.
	wg sync.WaitGroup

	// gathering holds the topics reserved within gatherWindow of the
	// last round's start, for the round that starts when the window ends
	// (gather), and joined the traced requests that added to it after
	// the first (the round span's links); lastRound is when the last
	// round started. All under mu.
	gathering []*topic
	joined    []trace.Link
	lastRound time.Time

	// leaving holds the topics whose grace ran out (or were evicted)
	// within gatherWindow, for the one round of unsubscribes a timer
	// starts when the window ends (queueLeaveLocked). Under mu.
	leaving []*topic

	refusals refusals         // the last refused local subscribes (refusals.go)
	upstream upstreamRefusals // the topics the upstream refused lately (upstreamrefusals.go)
}

// newHub returns a hub whose topics are subscribed and unsubscribed
// upstream through the feed that feed returns, their names checked by
// proto, and built from tc.
func newHub(ctx context.Context, cfg *Config, live *atomic.Pointer[liveSettings], proto protocol.Protocol, feed func(context.Context) (client.Holder, error), tc topicConfig, log *zap.Logger) *hub {
	return &hub{
		ctx:      ctx,
		cfg:      cfg,
		live:     live,
		proto:    proto,
		feed:     feed,
		twins:    tc.wire.SubscriptionID() != "",
		topicCfg: tc,
		stats:    tc.stats,
		tracer:   newTracer(cfg.TracerProvider),
		log:      log,
		topics:   make(map[string]*topic),
		byLocal:  make(map[string]*topic),
	}
}

// maxTopicBytes caps a topic's name: the longest real ones (an Ethereum
// logs filter naming many addresses) stay far below it, and nothing a
// local client sends becomes an upstream frame of unbounded size.
const maxTopicBytes = 4 << 10

// validate reports whether name is a topic of the hub's dialect, no
// longer than maxTopicBytes and, when Config.Topics lists what the
// upstream offers, one of those, and returns its upstream topic (a
// twin's base) parsed: the one parse of the topic on its way upstream,
// handed on to the feed (hub.open).
func (h *hub) validate(name string) (*protocol.Topic, error) {
	if base, n, twin := strings.Cut(name, twinMark); twin {
		// Only a dialect of subscription ids has twins (twins.go).
		if _, err := strconv.Atoi(n); err != nil || !h.twins {
			return nil, fmt.Errorf("%w: %q", errUnknownTopic, name)
		}
		name = base
	}
	if len(name) > maxTopicBytes {
		return nil, fmt.Errorf("%w: %.40q… of %d bytes: at most %d", errUnknownTopic, name, len(name), maxTopicBytes)
	}
	t, err := h.proto.NewTopic(name)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errUnknownTopic, err)
	}
	live := h.live.Load()
	if _, ok := live.offeredSet[name]; len(live.offeredSet) > 0 && !ok {
		if t.Private {
			return nil, fmt.Errorf("%w %q: a private channel: it needs a login on the upstream connection (a program embedding "+
				"pkg/sidecar gives it in Config.UpstreamOptions, as client.WithOnConnect with the venue's login, e.g. okx.Login) "+
				"and a place in -topics; this sidecar offers %s", errUnknownTopic, name, offered(live.topics))
		}
		return nil, fmt.Errorf("%w %q: this sidecar offers %s", errUnknownTopic, name, offered(live.topics))
	}
	return t, nil
}

// byLocalID returns the topic whose local subscription id is id, if the
// hub holds one.
func (h *hub) byLocalID(id string) *topic {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.byLocal[id]
}

// offeredSet returns topics as a set, for validate's look-up.
func offeredSet(topics []string) map[string]struct{} {
	set := make(map[string]struct{}, len(topics))
	for _, t := range topics {
		set[t] = struct{}{}
	}
	return set
}

// offered lists topics for an error: the first few, and how many more.
func offered(topics []string) string {
	const shown = 12
	if len(topics) <= shown {
		return format.QuotedList(topics)
	}
	return fmt.Sprintf("%s and %d more (see /v1/status)", format.QuotedList(topics[:shown]), len(topics)-shown)
}

// reserve is a subscribe's step on the hub: for s (nil for the
// sidecar's own use, a book request), it takes a reference on each topic
// of names s does not hold yet, and starts the round that opens upstream
// those the hub does not hold (open, on a goroutine of its own). Names
// that are not topics are left out, their reasons summed up in invalid
// (refusedTopics). The request is refused whole (refusal), before
// anything is subscribed upstream, when it would take s past
// Config.MaxTopicsPerClient (s is closed with the reason,
// errTooManyTopics; counted before any name is checked, so the cost of
// a refusal is bounded by the limit, not by the request) or the hub past
// Config.MaxTopics once topics nobody holds any more (in their grace
// period) are let go. Every topic returned is pending on s until the
// session attaches it or lets it go (session.attach, session.await,
// session.unsubscribe): a batch's later requests count it against the
// limit as one-by-one requests would. For a session, called by its
// subscription goroutine, which owns s.topics and s.pending.
func (h *hub) reserve(s *session, names []string) (reserved []*topic, invalid, refusal error) {
	limit := h.live.Load().maxTopicsPerClient
	wanted, over := h.unheld(s, names, limit)
	if over {
		err := fmt.Errorf("%w: the limit is %d per client", errTooManyTopics, limit)
		h.refused(s, names, err) // counted before the client can see the close
		s.close(reasonTooManyTopics(limit), true)
		return nil, nil, err
	}
	var room [4]*protocol.Topic // parsed's, on the stack for a request of a few topics
	wanted, parsed, invalid := h.valid(wanted, room[:0])
	h.mu.Lock()
	reserved, opened, refusal := h.referenceLocked(wanted, parsed)
	if len(opened) > 0 {
		var parent trace.SpanContext
		if s != nil {
			parent = s.trace
		}
		go h.open(opened, parent)
	}
	h.mu.Unlock()
	if refusal != nil && s != nil {
		refusal = errors.Join(invalid, refusal)
		h.refused(s, names, refusal)
	}
	if s != nil {
		for _, t := range reserved {
			s.pending[t.name] = t
		}
	}
	return reserved, invalid, refusal
}

// unheld returns the distinct names of names that s does not hold or
// have pending (all of them for s nil), in request order, and whether
// they would take s past limit (Config.MaxTopicsPerClient: a client
// above a lowered limit keeps its topics and may take no more); it stops counting
// there, so its cost is bounded by the limit and the request's length,
// never their product.
func (h *hub) unheld(s *session, names []string, limit int) (wanted []string, over bool) {
	room := len(names)
	if s != nil {
		room = limit - len(s.topics) - len(s.pending)
	}
	seen := make(map[string]struct{}, min(len(names), max(room, 0)+1))
	for _, n := range names {
		if _, dup := seen[n]; dup || (s != nil && s.holds(n)) {
			continue
		}
		if len(seen) >= room {
			return nil, true
		}
		seen[n] = struct{}{}
		wanted = append(wanted, n)
	}
	return wanted, false
}

// valid keeps the names of names that are topics (validate) the
// upstream has not refused lately (upstreamrefusals.go), in place, with
// their upstream topics parsed, appended to room (parsed[i] is
// topics[i]'s), and sums up the others' reasons in invalid.
func (h *hub) valid(names []string, room []*protocol.Topic) (topics []string, parsed []*protocol.Topic, invalid error) {
	var refused refusedTopics
	topics, parsed = names[:0], room
	now := time.Now()
	for _, n := range names {
		p, err := h.validate(n)
		if err == nil {
			err = h.upstream.refused(upstreamName(n), now)
		}
		if err != nil {
			refused.add(err)
			continue
		}
		topics, parsed = append(topics, n), append(parsed, p)
	}
	return topics, parsed, refused.err()
}

// referenceLocked takes a reference on every topic of names (valid,
// distinct; parsed[i] is names[i]'s upstream topic), creating those the
// hub does not hold yet (opened), or on none of them (see reserve).
// Called with h.mu held.
func (h *hub) referenceLocked(names []string, parsed []*protocol.Topic) (reserved, opened []*topic, err error) {
	if h.closed {
		return nil, nil, ErrClosed
	}
	creating := 0
	for _, name := range names {
		if h.topics[name] == nil {
			creating++
		}
	}
	if over := len(h.topics) + creating - h.cfg.MaxTopics; over > 0 {
		h.evictLocked(over, names)
	}
	if len(h.topics)+creating > h.cfg.MaxTopics {
		return nil, nil, maxTopicsError(h.cfg.MaxTopics)
	}
	reserved = make([]*topic, 0, len(names))
	for i, name := range names {
		t := h.topics[name]
		if t == nil {
			t = newTopic(name, parsed[i], h.topicCfg)
			h.topics[name] = t
			if t.localID != "" {
				h.byLocal[t.localID] = t
			}
			h.wg.Add(1) // done when the topic's pump ends, or its subscribe fails
			opened = append(opened, t)
		}
		t.refs++
		h.stopGraceLocked(t)
		reserved = append(reserved, t)
	}
	return reserved, opened, nil
}

// gatherWindow is how long after a round of upstream subscribes starts
// the topics reserved meanwhile are gathered for the next round: local
// subscribes that come together (twenty programs starting at once) go
// upstream in a few requests, where the exchange's request limits
// (Deribit's subscribe pace) would otherwise queue one request each.
const gatherWindow = 10 * time.Millisecond

// gather makes the round topics go upstream in: at once when no round
// started within gatherWindow (a lone subscribe waits for nothing), else
// the round of every topic reserved until the window ends, which the
// first of them waits for and returns; the others get nil, their topics
// taken by that round, and their parent (a local request's trace, when
// valid) among the links gather returns to the first. Rounds run side by
// side: a slow one holds up no other.
func (h *hub) gather(topics []*topic, parent trace.SpanContext) ([]*topic, []trace.Link) {
	h.mu.Lock()
	if len(h.gathering) > 0 { // a gathered round is about to start
		h.gathering = append(h.gathering, topics...)
		if parent.IsValid() {
			h.joined = append(h.joined, trace.Link{SpanContext: parent})
		}
		h.mu.Unlock()
		return nil, nil
	}
	since := time.Since(h.lastRound)
	if since >= gatherWindow {
		h.lastRound = time.Now()
		h.mu.Unlock()
		return topics, nil
	}
	h.gathering = topics
	h.mu.Unlock()
	window := time.NewTimer(gatherWindow - since)
	select {
	case <-window.C:
	case <-h.ctx.Done(): // the round fails at once
		window.Stop()
	}
	h.mu.Lock()
	batch, joined := h.gathering, h.joined
	h.gathering, h.joined = nil, nil
	h.lastRound = time.Now()
	h.mu.Unlock()
	return batch, joined
}

// wait waits for a reserved topic's upstream subscribe. On failure the
// reference is released and the error returned.
func (h *hub) wait(ctx context.Context, t *topic) error {
	select {
	case <-t.ready:
	case <-ctx.Done():
		h.release(t)
		switch {
		case h.ctx.Err() != nil:
			return ErrClosed
		case errors.Is(ctx.Err(), context.Canceled):
			return fmt.Errorf("%w: %w", errClientLeft, ctx.Err()) // the upstream may be fine
		}
		return fmt.Errorf("no answer from the upstream within %v (is it up? see /v1/status): %w", h.cfg.RequestTimeout, ctx.Err())
	}
	if t.err != nil {
		h.release(t)
		return t.err
	}
	return nil
}

// open is a round: it gathers the topics of the reserves that came
// together (gather), subscribes them upstream in one call on the feed (one
// round of requests where the upstream allows), handing on the topics
// validate parsed, then starts each
// subscribed topic's goroutine, which runs its pump until the upstream
// subscription ends; a topic that failed is removed and its waiters told.
// Each reserve that opens topics starts one, with the trace of the
// local request that made it (parent); the reserved topics' counts in
// h.wg keep the hub from closing under it. With tracing on the round is
// a span, sidecar.subscribe, under the first request's trace and linked
// to the others'.
func (h *hub) open(topics []*topic, parent trace.SpanContext) {
	topics, joined := h.gather(topics, parent)
	if len(topics) == 0 {
		return
	}
	parsed := make([]*protocol.Topic, len(topics))
	for i, t := range topics {
		parsed[i] = t.parsed
	}
	ctx, cancel := context.WithTimeout(h.ctx, h.cfg.RequestTimeout)
	ctx, span := h.tracer.start(ctx, parent, "sidecar.subscribe", trace.SpanKindClient, attribute.Int("wsfan.topics", len(topics)), joined)
	var feeds []client.Stream
	var errs []error
	f, err := h.feed(ctx)
	for err == nil {
		// While the upstream is down the client queues the subscribes; a
		// connection lost while they were in flight is tried again.
		feeds, errs, err = f.SubscribeTopics(ctx, parsed)
		if err == nil || !errors.Is(err, client.ErrConnectionLost) || ctx.Err() != nil {
			break
		}
	}
	cancel()
	var failed []string
	var firstErr error
	for i, t := range topics {
		terr := err
		if terr == nil && errs[i] != nil {
			terr = errs[i]
		}
		if terr == nil && feeds[i] == nil {
			terr = errors.New("no subscription")
		}
		if terr != nil {
			h.mu.Lock()
			h.removeLocked(t)
			h.mu.Unlock()
			t.fail(terr)
			h.upstream.note(t.upstream, terr, time.Now())
			failed = append(failed, t.name)
			firstErr = cmp.Or(firstErr, terr)
			h.wg.Done()
			continue
		}
		go h.run(t, feeds[i])
	}
	if span != nil && len(failed) > 0 {
		span.SetAttributes(attribute.Int("wsfan.topics_failed", len(failed)))
	}
	end(span, firstErr)
	if len(failed) > 0 { // one line a round, however many topics it refused
		h.log.Info("upstream subscribe failed", zap.Int("topics", len(failed)),
			zap.Strings("names", shownTopics(failed)), zap.NamedError("first_error", firstErr))
	}
}

// run is a topic's goroutine: it runs the pump until the upstream
// subscription ends.
func (h *hub) run(t *topic, sub client.Stream) {
	defer h.wg.Done()
	if err := t.pump(sub); err != nil {
		h.lost(t, err)
	}
}

// list returns the live topics sorted by name.
func (h *hub) list() []*topic {
	h.mu.Lock()
	out := make([]*topic, 0, len(h.topics))
	for _, t := range h.topics {
		out = append(out, t)
	}
	h.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// status returns the live topics' lines of /v1/status, sorted by name.
func (h *hub) status() []TopicStatus {
	topics := h.list()
	refs := make([]int, len(topics))
	h.mu.Lock()
	for i, t := range topics {
		refs[i] = t.refs
	}
	h.mu.Unlock()
	out := make([]TopicStatus, len(topics))
	for i, t := range topics {
		out[i] = t.status(refs[i])
	}
	return out
}

// sample updates every topic's message rate; elapsed is the time since
// the last call. Called by the Server's sampler goroutine only.
func (h *hub) sample(elapsed time.Duration) {
	for _, t := range h.list() {
		t.sample(elapsed)
	}
}

// close cancels every grace timer and waits for the hub's goroutines. The
// upstream must be closing, which ends every pump.
func (h *hub) close() {
	h.mu.Lock()
	h.closed = true
	for _, t := range h.topics {
		h.stopGraceLocked(t)
	}
	h.mu.Unlock()
	h.wg.Wait()
}
