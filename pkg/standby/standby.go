// Package standby keeps hot standby connections (legs) beside the one in
// use, merging each subscription's messages from every leg into one
// stream. It is built on exported seams of package client (NewMerge,
// SinkTo, Settings and Budget, AsLeg and Leg, Identifier) and knows
// nothing of a Client's internals.
//
// Goroutines: one event relay per leg (relay.Relay), the switch-back
// loop when there are several endpoints (switchback.go), a merge's
// LeaveAsync, and a rejoin hold's timer (merge.go); all but the timers
// are counted in the Standby's wait group and ended by Close. A merge's
// offers run on the legs' readers.
package standby

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wsfan/wsfan/internal/relay"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// Max is the most standby connections Dial keeps beside the one in use.
const Max = 3

// Standby keeps hot standby connections (legs) beside the one in use,
// as market-data lines are run on two feeds: every leg carries the same
// subscriptions, and each subscription's messages are merged into one
// stream, every message delivered once, in the order it first arrived on
// any leg. When a leg dies, the others carry on: nothing is lost and no
// message is flagged (FlagReconnected, and FlagBackfilled on what the
// leg's client fetches to fill its hole, are kept only when no other leg
// was up throughout the hole), and the dead leg reconnects and restores
// its topics in the background, as any Client does.
//
// A message's identity comes from the fields its venue documents
// (protocol.MessageReader.AppendIdentity: Deribit's change_id, trade_id and timestamp,
// Ethereal's t and pt, Ethereum's hashes); where a venue gives none
// (Thalex), from its whole content, which is the same on two connections
// to one venue. How many times each leg sent each identity is counted,
// so a message sent twice on purpose is delivered twice. The counts are
// kept for the last StandbyWindow identities of a subscription: a leg
// more than that many messages behind the first on one subscription
// has its late messages delivered again. Where a topic's messages carry
// their place in it (a book's change id, a head's block number), the
// merged stream never goes back: a message placed before the last one
// delivered is dropped, so a leg back from a hole with a snapshot older
// than what another leg delivered never rolls a book back.
//
// Each leg is a Client of its own, dialled with the same options and
// counted by the venue as a connection: a venue's cap on connections
// from one address (Deribit's 32) counts every leg, and a subscription
// costs each leg its share of the venue's request budget. Settings made
// per connection (cancel-on-disconnect: WithSessionSetting) are made on
// each leg with the connection's scope; never give a standby a setting
// of the account's scope, whose loss with a dying standby would act on
// the account. With several endpoints (WithEndpoints), leg i prefers
// endpoint i mod n, so the legs' connections go to different servers; a
// leg that failed over takes its own back (WithSwitchBack), and
// Client.Endpoint counts a leg's endpoint in the Standby's list.
//
// A session setting (protocol.MethodClass.Session: cancel-on-disconnect of
// the connection's scope) is made on every leg, and by a leg that is down
// when it connects; one of the account's scope (protocol.MethodClass.Account)
// is refused.
//
// Calls go over a connected leg: the first one, or on a chain (Ethereum,
// with a newHeads subscription) the one with the highest head, never
// one more than WithHeadLag blocks behind it, and one whose pong is late
// (past half the pong timeout: the link may be dying) only when no other
// can take it. A read-only call
// (protocol.MethodClass.ReadOnly) whose leg dies before its answer is made again on
// another; any other call, an order above all, never is. It is safe for
// concurrent use.
type Standby struct {
	legs    []*client.Client
	ctl     []client.Leg // ctl[i] is legs[i]'s
	health  []legHealth  // health[i] is legs[i]'s, written by its relay
	proto   protocol.Protocol
	methods protocol.MethodClassifier // nil where the venue classifies none
	seed    maphash.Seed
	headLag int     // WithHeadLag
	copies  *copies // the legs' fast path (copies.go); nil where the dialect has none

	mu     sync.Mutex // protects closed and merges
	closed bool
	merges map[*merge]struct{} // the merged subscriptions not ended

	events    *relay.Relay
	ctx       context.Context // cancelled by Close
	cancel    context.CancelFunc
	wg        sync.WaitGroup // event relays and merge forwarders
	closeOnce sync.Once
}

// legHealth is when a leg last came up, its subscriptions restored, as
// UnixNano; 0 while it is down.
type legHealth struct {
	upSince atomic.Int64
}

// Dial dials 1+standby legs to url (and the endpoints of
// client.WithEndpoints, leg i preferring the i-th), all at once, and
// returns once each leg's first attempt has ended with at least one leg
// up (with client.WithRetryOnFailedConnect, even with none). A leg whose
// first attempt failed keeps dialing in the background, its
// subscriptions queued meanwhile. standby is 0 to Max; 0 is one
// connection, as client.Dial.
func Dial(ctx context.Context, url string, standby int, opts ...client.Option) (*Standby, error) {
	if standby < 0 || standby > Max {
		return nil, fmt.Errorf("standby.Dial: %d standby connections, want 0 to %d", standby, Max)
	}
	set, err := client.Resolve(opts...)
	if err != nil {
		return nil, err
	}
	proto := set.Protocol()
	if most := proto.Venue().ConnectionsPerIP; most > 0 && standby+1 > most {
		return nil, fmt.Errorf("standby.Dial: %d connections would pass the venue's limit of %d from one IP address", standby+1, most)
	}
	sb := &Standby{
		legs:    make([]*client.Client, standby+1),
		ctl:     make([]client.Leg, standby+1),
		health:  make([]legHealth, standby+1),
		proto:   proto,
		seed:    maphash.MakeSeed(),
		headLag: set.HeadLag(),
		merges:  make(map[*merge]struct{}),
		copies:  newCopies(proto, standby+1),
	}
	sb.methods = proto.Venue().Methods
	sb.ctx, sb.cancel = context.WithCancel(context.Background())
	budget := set.Budget() // one budget for every leg: the venue counts them all
	urls := append([]string{url}, set.Endpoints()...)
	errs := make([]error, len(sb.legs))
	var dials sync.WaitGroup
	for i := range sb.legs {
		dials.Add(1)
		go func() {
			defer dials.Done()
			sb.legs[i], errs[i] = client.Dial(ctx, urls[i%len(urls)], append(legOptions(opts, urls, i, budget), sb.copies.option(i, set.Dialer())...)...)
		}()
	}
	dials.Wait()
	for i := range sb.legs {
		if errs[i] != nil {
			sb.cancel()
			sb.closeLegs()
			return nil, fmt.Errorf("leg %d: %w", i, errs[i])
		}
		sb.ctl[i] = client.LegOf(sb.legs[i])
		sb.copies.dialled(i, sb.ctl[i])
	}
	sb.events = relay.New(cap(sb.legs[0].Events()))
	up := false
	for i, c := range sb.legs {
		if c.State() == client.StateConnected {
			sb.health[i].upSince.Store(time.Now().UnixNano())
			up = true
		}
		sb.wg.Add(1)
		go func() {
			defer sb.wg.Done()
			sb.events.Relay(c.Events(), i, func(ev client.Event) { sb.health[i].seen(ev) })
		}()
	}
	if every, after := set.SwitchBack(); len(urls) > 1 && every > 0 {
		sb.wg.Add(1)
		go sb.switchBacks(every, after)
	}
	if !up && !set.RetryOnFailedConnect() {
		if err := sb.ctl[0].Connected(ctx); err != nil { // it names the last failure
			_ = sb.Close()
			return nil, fmt.Errorf("no leg connected: %w", err)
		}
	}
	return sb, nil
}

// legOptions are leg i's: the caller's, then the leg's place (client.AsLeg:
// its endpoints starting at the i-th, dialing on at once when the first
// attempt fails), the budget every leg shares (the zero one for none),
// and its metrics (client.WithMetrics) named "<name>-leg<i>" after the
// first.
func legOptions(opts []client.Option, urls []string, i int, budget client.Budget) []client.Option {
	rest := make([]string, 0, len(urls)-1)
	for k := 1; k < len(urls); k++ {
		rest = append(rest, urls[(i+k)%len(urls)])
	}
	leg := append(opts[:len(opts):len(opts)], client.AsLeg(i%len(urls), rest), client.WithBudget(budget))
	if i > 0 {
		leg = append(leg, client.WithMetricsSuffix(fmt.Sprintf("-leg%d", i)))
	}
	return leg
}

// seen keeps the leg's health from its events: up once its subscriptions
// are live again (Connected follows the restore), down from its
// disconnect.
func (h *legHealth) seen(ev client.Event) {
	switch ev.Kind {
	case client.Connected:
		h.upSince.Store(ev.Time.UnixNano())
	case client.Disconnected:
		h.upSince.Store(0)
	}
}

// Legs returns the legs' clients, the first dialled first: for their
// state, endpoints and lag. Closing one is closing the Standby's leg.
func (sb *Standby) Legs() []*client.Client { return append([]*client.Client(nil), sb.legs...) }

// Events returns every leg's events, each marked with its leg's index
// (Event.Connection). It is closed by Close.
func (sb *Standby) Events() <-chan client.Event { return sb.events.C() }

// State returns StateConnected while any leg is connected, and otherwise
// the first leg's state.
func (sb *Standby) State() client.State {
	for _, c := range sb.legs {
		if c.State() == client.StateConnected {
			return client.StateConnected
		}
	}
	return sb.legs[0].State()
}

// Subscribe subscribes to topics on every leg and returns one
// Subscription of their merged messages, with opts as
// client.Client.Subscribe takes them. It fails if a leg refuses the
// topics; a leg that is down queues them (see Dial). The Subscription ends when every leg's
// part has ended (a leg closed, a topic refused on its restore), with
// the last one's error.
func (sb *Standby) Subscribe(ctx context.Context, topics []string, opts ...client.SubscribeOption) (*client.Subscription, error) {
	names, parsed, err := sb.legs[0].ParseTopics(topics)
	if err != nil {
		return nil, err
	}
	m, err := sb.newMerge(names, parsed, opts)
	if err != nil {
		return nil, err
	}
	parts := make([]*client.Subscription, len(sb.legs))
	for i, c := range sb.legs {
		sink := client.SinkTo(m.out, func(msg client.Message, place uint64) { m.offerAt(i, msg, place) }, func(_ *client.Subscription, err error) { m.partEnded(i, err) })
		if parts[i], err = c.Subscribe(ctx, names, client.Buffer(1), sink); err != nil {
			m.setParts(ctx, parts)
			_ = m.end(ctx, nil) // the failure returned is the subscribe's
			return nil, fmt.Errorf("leg %d: %w", i, err)
		}
	}
	m.setParts(ctx, parts)
	return m.out.Subscription(), nil
}

// SubscribeTopics subscribes each topic on its own on every leg, in as
// few requests as each leg allows, and returns a merged Stream each (see
// Subscribe): a Standby is a client.Holder. The topics go to every leg
// as they were parsed (client.Client.SubscribeEachTopic): no leg parses
// them again. A topic a leg refuses is refused.
func (sb *Standby) SubscribeTopics(ctx context.Context, topics []*protocol.Topic) ([]client.Stream, []error, error) {
	merges := make(map[string]*merge, len(topics))
	for _, t := range topics {
		err := fmt.Errorf("SubscribeTopics: %q given twice", t.Name) // a part's messages name only their topic
		var m *merge
		if merges[t.Name] == nil {
			m, err = sb.newMerge([]string{t.Name}, []*protocol.Topic{t}, nil)
		}
		if err != nil {
			for _, made := range merges { // nothing subscribed yet: forget them
				made.finish(nil)
			}
			return nil, nil, err
		}
		merges[t.Name] = m
	}
	byLeg := make([][]*client.Subscription, len(sb.legs))
	errs := make([]error, len(topics))
	var failed error
	for i, c := range sb.legs {
		if len(topics) == 0 {
			break
		}
		sink := client.SinkTo(merges[topics[0].Name].out, // every merge has the default delivery
			func(msg client.Message, place uint64) { merges[msg.Topic].offerAt(i, msg, place) },
			func(part *client.Subscription, err error) { merges[part.Topics()[0]].partEnded(i, err) })
		subs, serrs, err := c.SubscribeEachTopic(ctx, topics, client.Buffer(1), sink)
		if err != nil {
			failed = fmt.Errorf("leg %d: %w", i, err)
			break
		}
		byLeg[i] = subs
		for k, e := range serrs {
			errs[k] = cmp.Or(errs[k], e)
		}
	}
	streams := make([]client.Stream, len(topics))
	for k, t := range topics {
		parts := make([]*client.Subscription, len(sb.legs))
		for i := range sb.legs {
			if byLeg[i] != nil {
				parts[i] = byLeg[i][k]
			}
		}
		m := merges[t.Name]
		m.setParts(ctx, parts)
		if failed != nil || errs[k] != nil {
			_ = m.end(ctx, nil) // the failure returned is the subscribe's
			continue
		}
		streams[k] = m.out.Subscription()
	}
	if failed != nil {
		return nil, nil, failed
	}
	return streams, errs, nil
}

// UnsubscribeStreams ends streams, each merged subscription on every
// leg. A stream already ended is not a failure.
func (sb *Standby) UnsubscribeStreams(ctx context.Context, streams []client.Stream) error {
	return client.UnsubscribeAll(ctx, streams)
}

// A Standby is a client.Conn, and so a client.Holder; it knows its lag
// and endpoint too (state.go).
var (
	_ client.Conn       = (*Standby)(nil)
	_ client.Lagger     = (*Standby)(nil)
	_ client.Endpointer = (*Standby)(nil)
)

// Call makes a call over a connected leg (see CallRaw), its params and
// result as client.Client.Call takes them.
func (sb *Standby) Call(ctx context.Context, method string, params, result any) error {
	return client.CallJSON(ctx, method, params, result, sb.CallRaw)
}

// CallRaw makes a call over a connected leg, the highest head's on a
// chain (see Standby), the first leg when none is connected. When the leg dies before the answer, a read-only method
// (protocol.MethodClass.ReadOnly) is called again on the next connected leg; any
// other is not: its error says the connection was lost.
func (sb *Standby) CallRaw(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	var class protocol.MethodClass
	if sb.methods != nil {
		class = sb.methods.ClassifyMethod(method, params)
	}
	if class.Account {
		return nil, fmt.Errorf("call %s: %w: a setting of the account's scope acts when any connection is lost, "+
			"and a standby connection may die: give it the connection's scope, which every leg keeps", method, client.ErrRefused)
	}
	if class.IsSession {
		return sb.callEveryLeg(ctx, class.Session, method, params)
	}
	tried := make([]bool, len(sb.legs))
	err := fmt.Errorf("call %s: %w: no leg to take it", method, client.ErrConnectionLost)
	var res json.RawMessage
	for i := sb.caller(tried); i >= 0; i = sb.caller(tried) {
		tried[i] = true
		res, err = sb.legs[i].CallRaw(ctx, method, params)
		if err == nil || !errors.Is(err, client.ErrConnectionLost) || !sb.ctl[i].ReadOnly(method) || ctx.Err() != nil {
			break
		}
	}
	return res, err
}

// callEveryLeg makes a session setting (cancel-on-disconnect of the
// connection's scope) on every connected leg, and keeps it for the legs
// that are down, which make it when they connect, before carrying
// anything. With no leg connected it fails at once, keeping nothing, as
// a Client's call does while it reconnects. It returns the first connected leg's answer, or
// the first failure, naming its leg.
func (sb *Standby) callEveryLeg(ctx context.Context, set protocol.SessionSetting, method string, params json.RawMessage) (json.RawMessage, error) {
	if err := sb.ctl[0].CheckSetting(set, method); err != nil {
		return nil, err
	}
	var first json.RawMessage
	answered := false
	var down []client.Leg
	for i, c := range sb.legs {
		if c.State() != client.StateConnected {
			down = append(down, sb.ctl[i])
			continue
		}
		res, err := c.CallRaw(ctx, method, params)
		if err != nil {
			return nil, fmt.Errorf("leg %d: %w", i, err)
		}
		if !answered {
			first, answered = res, true
		}
	}
	if !answered {
		return nil, fmt.Errorf("call %s: %w: no leg is connected", method, client.ErrConnectionLost)
	}
	for _, l := range down {
		l.KeepSetting(set, method, params)
	}
	return first, nil
}

// Close closes every leg, then the Events channel, and returns once
// every goroutine of the Standby has ended. Subscriptions end without an
// error. It is safe to call more than once.
func (sb *Standby) Close() error {
	sb.closeOnce.Do(func() {
		sb.mu.Lock()
		sb.closed = true
		merges := make([]*merge, 0, len(sb.merges))
		for m := range sb.merges {
			merges = append(merges, m)
		}
		sb.mu.Unlock()
		for _, m := range merges { // first: a delivery waiting under Block holds a leg's reader
			m.out.End(nil)
		}
		sb.cancel()
		sb.closeLegs()
		sb.wg.Wait()
		sb.events.Close()
	})
	return nil
}

// closeLegs closes the legs dialled.
func (sb *Standby) closeLegs() {
	for _, c := range sb.legs {
		if c != nil {
			_ = c.Close()
		}
	}
}
