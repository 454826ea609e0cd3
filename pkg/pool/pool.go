package client

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/wsfan/wsfan/internal/format"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// Pool spreads subscriptions over several connections to one server, for
// servers that cap the topics of a connection: it opens a connection when
// the others hold their cap of topics, and presents them as one client.
// Each connection is a Client of its own: it reconnects by itself and
// restores only its own topics, in one batch, and a topic stays on the
// connection that holds it. Calls go over the first connection. It is
// safe for concurrent use; its Subscribe calls run one at a time.
type Pool struct {
	url    string
	opts   []Option
	perCap int
	// most is the venue's cap on connections from one IP address
	// (protocol.ConnectionLimited), 0 for none: a Subscribe needing a
	// connection past it fails naming the cap.
	most int

	// mu protects members and serializes Subscribe, so that two calls
	// never place topics on a connection past its cap.
	mu      sync.Mutex
	members []*Client // members[0] is never closed before the Pool
	closed  bool

	events *eventRelay

	ctx       context.Context // cancelled by Close
	cancel    context.CancelFunc
	wg        sync.WaitGroup // event forwarders and spanning subscriptions' goroutines
	closeOnce sync.Once
}

// DialPool dials the pool's first connection, with opts as Dial takes
// them, and returns once it is up; later connections are dialed by
// Subscribe when every open one holds perConnection topics (the server's
// per-connection cap). With WithMetrics, the connections after the first
// register as "<name>-1", "<name>-2"...
func DialPool(ctx context.Context, url string, perConnection int, opts ...Option) (*Pool, error) {
	if perConnection < 1 {
		return nil, fmt.Errorf("DialPool: %d topics per connection, want at least 1", perConnection)
	}
	cfg := defaultConfig()
	for _, o := range opts {
		o.applyClient(&cfg)
	}
	p := &Pool{
		url:    url,
		opts:   append([]Option(nil), opts...),
		perCap: perConnection,
		events: newEventRelay(cfg.eventBuffer),
	}
	if l, ok := cfg.protocol.(protocol.ConnectionLimited); ok {
		p.most = l.ConnectionsPerIP()
	}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	if _, err := p.open(ctx); err != nil {
		p.cancel()
		return nil, err
	}
	return p, nil
}

// open dials one more connection and forwards its events. Called with
// p.mu held, or before p is shared.
func (p *Pool) open(ctx context.Context) (*Client, error) {
	i := len(p.members)
	if p.most > 0 && i >= p.most {
		return nil, fmt.Errorf("%w: connection %d would pass the venue's limit of %d connections from one IP address "+
			"(every other program on this address counts too)", ErrPoolFull, i+1, p.most)
	}
	opts := p.opts
	if i > 0 {
		opts = append(opts[:len(opts):len(opts)], clientOption(func(c *config) {
			if c.registerer != nil {
				c.metricsName = fmt.Sprintf("%s-%d", c.metricsName, i)
			}
		}))
	}
	c, err := Dial(ctx, p.url, opts...)
	if err != nil {
		return nil, fmt.Errorf("connection %d: %w", i, err)
	}
	p.members = append(p.members, c)
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		p.events.relay(c, i, nil)
	}()
	return c, nil
}

// Events returns the events of every connection, each marked with its
// connection's index (Event.Connection). It is closed by Close.
func (p *Pool) Events() <-chan Event { return p.events.ch }

// Connections returns how many connections the pool has open.
func (p *Pool) Connections() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.members)
}

// State returns StateConnected while every connection is connected, and
// otherwise the state of the first one that is not.
func (p *Pool) State() State {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.members {
		if s := c.State(); s != StateConnected {
			return s
		}
	}
	return StateConnected
}

// Call makes a call over the pool's first connection (see Client.Call).
func (p *Pool) Call(ctx context.Context, method string, params, result any) error {
	return p.first().Call(ctx, method, params, result)
}

// CallRaw makes a call over the pool's first connection (see
// Client.CallRaw).
func (p *Pool) CallRaw(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	return p.first().CallRaw(ctx, method, params)
}

func (p *Pool) first() *Client {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.members[0]
}

// Subscribe subscribes to topics as Client.Subscribe does. A topic that
// a connection already holds is subscribed there; the others go to the
// open connections with room under the cap, in order, and to new ones
// when none has room. When the topics end up on one connection, the
// Subscription is that connection's; when they span several, one
// goroutine per connection forwards its messages into the Subscription
// (Seq then counts across them), and a connection that ends its part
// (a topic refused on restore, the connection given up) ends the whole
// Subscription, which leaves the other connections at once.
func (p *Pool) Subscribe(ctx context.Context, topics []string, opts ...SubscribeOption) (*Subscription, error) {
	names, _, err := p.first().parseTopics(topics)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, ErrClosed
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
	c      *Client
	topics []string
}

// place chooses a connection for each topic, dialing new ones as needed.
// Called with p.mu held.
func (p *Pool) place(ctx context.Context, names []string) ([]placement, error) {
	var placed []placement
	at := make(map[*Client]int) // index in placed
	room := make(map[*Client]int)
	for _, c := range p.members {
		_, n := c.counts()
		room[c] = p.perCap - n
	}
	add := func(c *Client, topic string) {
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
		var target *Client
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
func (p *Pool) holder(topic string) *Client {
	for _, c := range p.members {
		if c.holds(topic) {
			return c
		}
	}
	return nil
}

// Close closes every connection, then the Events channel, and returns
// once every goroutine of the pool has ended. Subscriptions end without
// an error, as Client.Close ends them. It is safe to call more than once.
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
		p.events.close()
	})
	return nil
}
