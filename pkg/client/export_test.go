package client

import "github.com/wsfan/wsfan/pkg/protocol"

// This file opens the reader's hot path to the package's benchmarks
// without a network, so they time classify + route alone.

// newBenchClient is a client with no connection or goroutines: the
// topic table and the routing the reader uses, nothing else.
func newBenchClient(p protocol.Protocol, opts ...Option) *Client {
	cfg := defaultConfig()
	cfg.protocol = p
	for _, o := range opts {
		o(&cfg)
	}
	return &Client{
		cfg:    cfg,
		proto:  p,
		log:    cfg.logger,
		topics: newTopicTable(),
		subs:   make(map[*Subscription]struct{}),
		events: make(chan Event, 1),
	}
}

// newBenchConn is a connection with no socket: the reader's frame
// handling and pending table, nothing else.
func newBenchConn(c *Client) *conn {
	return &conn{c: c, pending: newPendingTable(), wake: make(chan struct{}, 1), done: make(chan struct{})}
}

// subscribeLocal attaches a subscription to topics as if the server had
// acknowledged them.
func (c *Client) subscribeLocal(topics ...string) *Subscription {
	names, parsed, err := c.parseTopics(topics)
	if err != nil {
		panic(err)
	}
	s := newSubscription(c, names, c.subscribeConfig(nil))
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, name := range names {
		ts := c.topics.get(name)
		if ts == nil {
			ts = newTopicState(parsed[i])
			ts.confirmed = true
			c.topics.add(ts)
			c.routes.Store(ts.key, ts)
		}
		ts.attach(s)
		s.states = append(s.states, ts)
	}
	c.subs[s] = struct{}{}
	return s
}
