// Package pool spreads subscriptions over several connections to one
// server, for servers that cap the topics of a connection. A Pool is
// built on the exported seams of package client (NewMerge,
// WithMetricsSuffix, ParseTopics, Holds, TopicCount) and knows nothing
// of a Client's internals.
//
// Goroutines: one event relay per connection (relay.Relay), and for a
// subscription spanning connections one forwarder per connection's part
// (merge.go), all counted in the Pool's wait group and ended by Close.
package pool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/wsfan/wsfan/internal/format"
	"github.com/wsfan/wsfan/internal/relay"
	"github.com/wsfan/wsfan/pkg/client"
)

// ErrFull: a Pool would need a connection past the venue's cap on
// connections from one IP address (protocol.Venue.ConnectionsPerIP).
var ErrFull = errors.New("wsfan: pool at the venue's connection limit")

// Pool spreads subscriptions over several connections to one server, for
// servers that cap the topics of a connection: it opens a connection when
// the others hold their cap of topics, and presents them as one client.
// Each connection is a client.Client of its own: it reconnects by itself
// and restores only its own topics, in one batch, and a topic stays on
// the connection that holds it. Calls go over the first connection. It
// is safe for concurrent use; its Subscribe calls run one at a time.
type Pool struct {
	url    string
	opts   []client.Option
	perCap int
	// most is the venue's cap on connections from one IP address
	// (protocol.Venue.ConnectionsPerIP), 0 for none: a Subscribe needing a
	// connection past it fails naming the cap.
	most int

	// mu protects members and serializes Subscribe, so that two calls
	// never place topics on a connection past its cap.
	mu      sync.Mutex
	members []*client.Client // members[0] is never closed before the Pool
	closed  bool

	events *relay.Relay

	ctx       context.Context // cancelled by Close
	cancel    context.CancelFunc
	wg        sync.WaitGroup // event relays and spanning subscriptions' forwarders
	closeOnce sync.Once
}

// Dial dials the pool's first connection, with opts as client.Dial takes
// them, and returns once it is up; later connections are dialed by
// Subscribe when every open one holds perConnection topics (the server's
// per-connection cap). With client.WithMetrics, the connections after
// the first register as "<name>-1", "<name>-2"...
func Dial(ctx context.Context, url string, perConnection int, opts ...client.Option) (*Pool, error) {
	if perConnection < 1 {
		return nil, fmt.Errorf("pool.Dial: %d topics per connection, want at least 1", perConnection)
	}
	first, err := client.Dial(ctx, url, opts...)
	if err != nil {
		return nil, fmt.Errorf("connection 0: %w", err)
	}
	p := &Pool{
		url:    url,
		opts:   append([]client.Option(nil), opts...),
		perCap: perConnection,
		events: relay.New(cap(first.Events())),
	}
	p.most = first.Protocol().Venue().ConnectionsPerIP
	p.ctx, p.cancel = context.WithCancel(context.Background())
	p.add(first)
	return p, nil
}

// open dials one more connection and forwards its events. Called with
// p.mu held.
func (p *Pool) open(ctx context.Context) (*client.Client, error) {
	i := len(p.members)
	if p.most > 0 && i >= p.most {
		return nil, fmt.Errorf("%w: connection %d would pass the venue's limit of %d connections from one IP address "+
			"(every other program on this address counts too)", ErrFull, i+1, p.most)
	}
	opts := append(p.opts[:len(p.opts):len(p.opts)], client.WithMetricsSuffix(fmt.Sprintf("-%d", i)))
	c, err := client.Dial(ctx, p.url, opts...)
	if err != nil {
		return nil, fmt.Errorf("connection %d: %w", i, err)
	}
	p.add(c)
	return c, nil
}

// add makes c the pool's next connection and relays its events. Called
// with p.mu held, or before p is shared.
func (p *Pool) add(c *client.Client) {
	i := len(p.members)
	p.members = append(p.members, c)
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		p.events.Relay(c.Events(), i, nil)
	}()
}

// Events returns the events of every connection, each marked with its
// connection's index (Event.Connection). It is closed by Close.
func (p *Pool) Events() <-chan client.Event { return p.events.C() }

// Connections returns how many connections the pool has open.
func (p *Pool) Connections() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.members)
}

// State returns StateConnected while every connection is connected, and
// otherwise the state of the first one that is not.
func (p *Pool) State() client.State {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.members {
		if s := c.State(); s != client.StateConnected {
			return s
		}
	}
	return client.StateConnected
}

// Call makes a call over the pool's first connection (see
// client.Client.Call).
func (p *Pool) Call(ctx context.Context, method string, params, result any) error {
	return p.first().Call(ctx, method, params, result)
}

// CallRaw makes a call over the pool's first connection (see
// client.Client.CallRaw).
func (p *Pool) CallRaw(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	return p.first().CallRaw(ctx, method, params)
}

func (p *Pool) first() *client.Client {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.members[0]
}

// Subscribe subscribes to topics as client.Client.Subscribe does. A
// topic that a connection already holds is subscribed there; the others
// go to the open connections with room under the cap, in order, and to
// new ones when none has room. When the topics end up on one
// connection, the Subscription is that connection's; when they span
// several, one goroutine per connection forwards its messages into the
// Subscription (Seq then counts across them), and a connection that ends
// its part (a topic refused on restore, the connection given up) ends
// the whole Subscription, which leaves the other connections at once.
func (p *Pool) Subscribe(ctx context.Context, topics []string, opts ...client.SubscribeOption) (*client.Subscription, error) {
	names, _, err := p.first().ParseTopics(topics)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, client.ErrClosed
	}
	placed, err := p.place(ctx, names)
	if err != nil {
		return nil, fmt.Errorf("failed to subscribe %s: %w", format.QuotedList(names), err)
	}
	if len(placed) == 1 {
		return placed[0].c.Subscribe(ctx, placed[0].topics, opts...)
	}
	return p.subscribeSpanning(ctx, names, placed, opts)
}

// placement is the topics of one Subscribe call that go to one
// connection.
type placement struct {
	c      *client.Client
	topics []string
}

// place chooses a connection for each topic, dialing new ones as needed.
// Called with p.mu held.
func (p *Pool) place(ctx context.Context, names []string) ([]placement, error) {
	var placed []placement
	at := make(map[*client.Client]int) // index in placed
	room := make(map[*client.Client]int)
	for _, c := range p.members {
		room[c] = p.perCap - c.TopicCount()
	}
	add := func(c *client.Client, topic string) {
		i, ok := at[c]
		if !ok {
			i = len(placed)
			at[c] = i
			placed = append(placed, placement{c: c})
		}
		placed[i].topics = append(placed[i].topics, topic)
	}
	for _, name := range names {
		if c := p.holder(name); c != nil {
			add(c, name)
			continue
		}
		var target *client.Client
		for _, c := range p.members {
			if room[c] > 0 {
				target = c
				break
			}
		}
		if target == nil {
			c, err := p.open(ctx)
			if err != nil {
				return nil, err
			}
			room[c] = p.perCap
			target = c
		}
		room[target]--
		add(target, name)
	}
	return placed, nil
}

// holder returns the connection whose table holds topic, or nil.
func (p *Pool) holder(topic string) *client.Client {
	for _, c := range p.members {
		if c.Holds(topic) {
			return c
		}
	}
	return nil
}

// Close closes every connection, then the Events channel, and returns
// once every goroutine of the pool has ended. Subscriptions end without
// an error, as client.Client.Close ends them. It is safe to call more
// than once.
func (p *Pool) Close() error {
	p.closeOnce.Do(func() {
		p.mu.Lock()
		p.closed = true
		members := p.members
		p.mu.Unlock()
		p.cancel()
		for _, c := range members {
			_ = c.Close()
		}
		p.wg.Wait()
		p.events.Close()
	})
	return nil
}

// A Pool is a client.Conn, and so a client.Holder.
var _ client.Conn = (*Pool)(nil)
