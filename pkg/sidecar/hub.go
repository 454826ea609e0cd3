package sidecar

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/wsfan/wsfan/internal/format"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// hub reference-counts upstream subscriptions: the first local subscriber
// of a topic opens it, and the last one leaving starts a grace timer whose
// expiry closes it. The topics one local request opens are subscribed
// upstream together, with those of any other request that came within
// a few milliseconds (queueOpenLocked), then each has one goroutine, started by the
// hub, running its pump until the upstream subscription ends. The hub is built from the values it needs, so it is
// tested alone with any subscribe function.
type hub struct {
	// Set by newHub, read only after.
	ctx         context.Context // ends upstream subscribes and unsubscribes when the Server closes
	cfg         *Config         // MaxTopics, Grace, RequestTimeout
	proto       protocol.Protocol
	subscribe   subscribeFunc
	unsubscribe unsubscribeFunc
	topicCfg    topicConfig
	twins       bool // the dialect acknowledges subscriptions with ids: a connection may hold twins (twins.go)
	log         *zap.Logger

	// mu protects the following and every topic's refs, grace, gen, dead.
	mu      sync.Mutex
	topics  map[string]*topic
	byLocal map[string]*topic // Ethereum local subscription id → topic
	closed  bool

	// wg counts the topics' goroutines, the gathered round's timer and
	// pending grace expiries.
	wg sync.WaitGroup

	// gathering holds the topics reserved within gatherWindow of the
	// last round's start, for the round a timer starts when the window
	// ends (see queueOpen); lastRound is when the last round started.
	// Both under mu.
	gathering []*topic
	lastRound time.Time

	// leaving holds the topics whose grace ran out (or were evicted)
	// within gatherWindow, for the one round of unsubscribes a timer
	// starts when the window ends (queueLeaveLocked). Under mu.
	leaving []*topic

	refusals refusals // the last refused local subscribes (refusals.go)
}

// newHub returns a hub whose topics are subscribed upstream with
// subscribe and unsubscribed with unsubscribe, their names checked by
// proto, and built from tc.
func newHub(ctx context.Context, cfg *Config, proto protocol.Protocol, subscribe subscribeFunc, unsubscribe unsubscribeFunc, tc topicConfig, log *zap.Logger) *hub {
	return &hub{
		ctx:         ctx,
		cfg:         cfg,
		proto:       proto,
		subscribe:   subscribe,
		unsubscribe: unsubscribe,
		twins:       tc.wire.SubscriptionID() != "",
		topicCfg:    tc,
		log:         log,
		topics:      make(map[string]*topic),
		byLocal:     make(map[string]*topic),
	}
}

// maxTopicBytes caps a topic's name: the longest real ones (an Ethereum
// logs filter naming many addresses) stay far below it, and nothing a
// local client sends becomes an upstream frame of unbounded size.
const maxTopicBytes = 4 << 10

// validate reports whether name is a topic of the hub's dialect, no
// longer than maxTopicBytes and, when Config.Topics lists what the
// upstream offers, one of those.
func (h *hub) validate(name string) error {
	if base, n, twin := strings.Cut(name, twinMark); twin {
		// Only a dialect of subscription ids has twins (twins.go).
		if _, err := strconv.Atoi(n); err != nil || !h.twins {
			return fmt.Errorf("%w: %q", errUnknownTopic, name)
		}
		name = base
	}
	if len(name) > maxTopicBytes {
		return fmt.Errorf("%w: %.40q… of %d bytes: at most %d", errUnknownTopic, name, len(name), maxTopicBytes)
	}
	if _, err := h.proto.NewTopic(name); err != nil {
		return fmt.Errorf("%w: %w", errUnknownTopic, err)
	}
	if len(h.cfg.Topics) > 0 && !slices.Contains(h.cfg.Topics, name) {
		return fmt.Errorf("%w %q: this sidecar offers %s", errUnknownTopic, name, offered(h.cfg.Topics))
	}
	return nil
}

// offered lists topics for an error: the first few, and how many more.
func offered(topics []string) string {
	const shown = 12
	if len(topics) <= shown {
		return format.QuotedList(topics)
	}
	return fmt.Sprintf("%s and %d more (see /v1/status)", format.QuotedList(topics[:shown]), len(topics)-shown)
}

// reserve takes a reference on every topic of names (valid, distinct),
// opening those the hub does not hold yet, or on none of them: a request
// that would take the hub past Config.MaxTopics, once topics nobody holds
// any more (in their grace period) are let go to make room, is refused
// whole, before anything is subscribed upstream. Every topic returned
// must be waited for (wait) or released.
func (h *hub) reserve(names []string) ([]*topic, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, ErrClosed
	}
	opening := 0
	for _, name := range names {
		if h.topics[name] == nil {
			opening++
		}
	}
	if over := len(h.topics) + opening - h.cfg.MaxTopics; over > 0 {
		h.evictLocked(over, names)
	}
	if len(h.topics)+opening > h.cfg.MaxTopics {
		return nil, fmt.Errorf("the limit of %d upstream topics is reached", h.cfg.MaxTopics)
	}
	reserved := make([]*topic, 0, len(names))
	var opened []*topic
	for _, name := range names {
		t := h.topics[name]
		if t == nil {
			t = newTopic(name, h.topicCfg)
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
	if len(opened) > 0 {
		h.queueOpenLocked(opened)
	}
	return reserved, nil
}

// gatherWindow is how long after a round of upstream subscribes starts
// the topics reserved meanwhile are gathered for the next round: local
// subscribes that come together (twenty programs starting at once) go
// upstream in a few requests, where the exchange's request limits
// (Deribit's subscribe pace) would otherwise queue one request each.
const gatherWindow = 10 * time.Millisecond

// queueOpenLocked starts the round that subscribes topics upstream: at
// once when no round started within gatherWindow (a lone subscribe waits
// for nothing), else with the others gathered until the window ends.
// Rounds run side by side: a slow one holds up no other. Called with
// h.mu held.
func (h *hub) queueOpenLocked(topics []*topic) {
	if len(h.gathering) > 0 { // a gathered round is about to start
		h.gathering = append(h.gathering, topics...)
		return
	}
	since := time.Since(h.lastRound)
	if since >= gatherWindow {
		h.lastRound = time.Now()
		go h.open(topics)
		return
	}
	h.gathering = topics
	h.wg.Add(1) // done when the gathered round has started
	time.AfterFunc(gatherWindow-since, func() {
		defer h.wg.Done()
		h.mu.Lock()
		batch := h.gathering
		h.gathering = nil
		h.lastRound = time.Now()
		h.mu.Unlock()
		h.open(batch)
	})
}

// wait waits for a reserved topic's upstream subscribe. On failure the
// reference is released and the error returned.
func (h *hub) wait(ctx context.Context, t *topic) error {
	select {
	case <-t.ready:
	case <-ctx.Done():
		h.release(t)
		return fmt.Errorf("no answer from the upstream within %v (is it up? see /v1/status): %w", h.cfg.RequestTimeout, ctx.Err())
	}
	if t.err != nil {
		h.release(t)
		return t.err
	}
	return nil
}

// open subscribes the topics of one round (see queueOpenLocked) upstream in one call
// (one round of requests where the upstream allows), then starts each
// subscribed topic's goroutine, which runs its pump until the upstream
// subscription ends; a topic that failed is removed and its waiters
// told.
func (h *hub) open(topics []*topic) {
	names := make([]string, len(topics))
	for i, t := range topics {
		names[i] = t.upstream
	}
	ctx, cancel := context.WithTimeout(h.ctx, h.cfg.RequestTimeout)
	feeds, errs, err := h.subscribe(ctx, names)
	cancel()
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
			h.log.Info("upstream subscribe failed", zap.String("topic", t.name), zap.Error(terr))
			h.wg.Done()
			continue
		}
		go h.run(t, feeds[i])
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

// release drops a reference; the last one starts the grace timer.
func (h *hub) release(t *topic) {
	h.mu.Lock()
	defer h.mu.Unlock()
	t.refs--
	if t.refs > 0 || t.dead || h.closed {
		return
	}
	t.gen++
	gen := t.gen
	h.wg.Add(1)
	t.grace = time.AfterFunc(h.cfg.Grace, func() {
		defer h.wg.Done()
		h.expire(t, gen)
	})
}

// stopGraceLocked cancels a pending expiry. Called with h.mu held.
func (h *hub) stopGraceLocked(t *topic) {
	if t.grace == nil {
		return
	}
	if t.grace.Stop() {
		h.wg.Done() // the expiry will never run
	}
	t.grace = nil
	t.gen++
}

// expire unsubscribes upstream a topic whose grace period ran out with
// no subscriber.
func (h *hub) expire(t *topic, gen uint64) {
	h.mu.Lock()
	if t.gen != gen || t.refs > 0 || t.dead || h.closed {
		h.mu.Unlock()
		return
	}
	t.grace = nil
	h.removeLocked(t)
	h.queueLeaveLocked(t)
	h.mu.Unlock()
}

// evictLocked lets go of up to n topics in their grace period, none of
// keep, to make room in a full table: a churn of clients must not leave a
// bystander refused for topics nobody holds. Called with h.mu held; the
// upstream unsubscribes go in the next round (queueLeaveLocked).
func (h *hub) evictLocked(n int, keep []string) {
	for name, t := range h.topics {
		if n == 0 {
			return
		}
		if t.refs > 0 || t.dead || t.grace == nil || slices.Contains(keep, name) {
			continue
		}
		h.removeLocked(t)
		h.queueLeaveLocked(t)
		n--
	}
}

// queueLeaveLocked queues a topic taken out of the tables for the next
// round of upstream unsubscribes, which starts gatherWindow after the
// first topic of the round: topics that end together (a client holding
// many leaves, and their grace runs out at once) leave upstream in as few
// requests as the exchange allows, as they were subscribed, not one
// request a topic. Called with h.mu held.
func (h *hub) queueLeaveLocked(t *topic) {
	h.leaving = append(h.leaving, t)
	if len(h.leaving) > 1 {
		return // the round's timer is set
	}
	h.wg.Add(1) // done when the round has ended
	time.AfterFunc(gatherWindow, func() {
		defer h.wg.Done()
		h.mu.Lock()
		batch := h.leaving
		h.leaving = nil
		h.mu.Unlock()
		h.leave(batch)
	})
}

// leave ends topics taken out of the tables: it waits for their upstream
// subscribes, unsubscribes them in one call, and waits for their pumps.
func (h *hub) leave(topics []*topic) {
	streams := make([]client.Stream, 0, len(topics))
	for _, t := range topics {
		// Every subscriber may leave before the upstream subscribe
		// finishes (an SSE client that went away): it ends within
		// RequestTimeout.
		<-t.ready
		if t.err == nil { // else it failed: there is nothing to unsubscribe
			streams = append(streams, t.sub)
		}
	}
	if len(streams) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(h.ctx, h.cfg.RequestTimeout)
	defer cancel()
	if err := h.unsubscribe(ctx, streams); err != nil && !errors.Is(err, context.Canceled) {
		h.log.Info("upstream unsubscribe failed", zap.Int("topics", len(streams)), zap.Error(err))
	}
	for _, t := range topics {
		if t.err == nil {
			<-t.done
		}
	}
	h.log.Debug("topics closed after their grace period", zap.Int("topics", len(streams)))
}

// removeLocked takes t out of the tables and cancels its pending expiry,
// which would find it dead. Called with h.mu held.
func (h *hub) removeLocked(t *topic) {
	t.dead = true
	h.stopGraceLocked(t)
	if h.topics[t.name] == t {
		delete(h.topics, t.name)
	}
	if t.localID != "" && h.byLocal[t.localID] == t {
		delete(h.byLocal, t.localID)
	}
}

// lost handles an upstream subscription that ended by itself (refused
// after a reconnect, reconnecting gave up): its local subscribers are
// disconnected with the reason, so they reconnect and subscribe again.
// Called by the topic's goroutine once the pump has returned.
func (h *hub) lost(t *topic, err error) {
	h.mu.Lock()
	h.removeLocked(t)
	closed := h.closed
	h.mu.Unlock()
	if closed {
		return
	}
	h.log.Warn("upstream subscription ended", zap.String("topic", t.name), zap.Error(err))
	for _, s := range t.subscribers() {
		s.close(reasonTopicLost(t.upstream, err), true)
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
