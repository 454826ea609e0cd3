package natstest

import (
	"context"
	"errors"
	"io"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/natsbridge"
	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// natsServer is an embedded nats-server with JetStream on 127.0.0.1 that
// can be stopped and started again on the same port and store.
type natsServer struct {
	t    testing.TB
	opts server.Options
	srv  *server.Server
}

func startNATS(t testing.TB) *natsServer {
	t.Helper()
	ns := &natsServer{t: t, opts: server.Options{
		Host:      "127.0.0.1",
		Port:      freePort(t),
		JetStream: true,
		StoreDir:  t.TempDir(),
		NoLog:     true,
		NoSigs:    true,
	}}
	ns.start()
	t.Cleanup(ns.stop)
	return ns
}

func (ns *natsServer) start() {
	ns.t.Helper()
	opts := ns.opts // NewServer keeps and changes its Options
	srv, err := server.NewServer(&opts)
	require.NoError(ns.t, err)
	srv.Start()
	require.True(ns.t, srv.ReadyForConnections(10*time.Second), "nats-server did not start")
	ns.srv = srv
}

func (ns *natsServer) stop() {
	if ns.srv != nil {
		ns.srv.Shutdown()
		ns.srv.WaitForShutdown()
		ns.srv = nil
	}
}

func (ns *natsServer) url() string { return "nats://" + ns.addr() }

func (ns *natsServer) addr() string {
	return net.JoinHostPort(ns.opts.Host, strconv.Itoa(ns.opts.Port))
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// connect opens a NATS connection as natsbridge.Join recommends: it
// reconnects forever (quickly, here) and buffers nothing while
// disconnected.
func connect(t testing.TB, url string, opts ...nats.Option) *nats.Conn {
	t.Helper()
	opts = append([]nats.Option{
		nats.MaxReconnects(-1),
		nats.ReconnectBufSize(-1),
		nats.ReconnectWait(50 * time.Millisecond),
		nats.ReconnectJitter(0, 0),
		nats.Timeout(2 * time.Second),
		nats.RetryOnFailedConnect(true),
	}, opts...)
	nc, err := nats.Connect(url, opts...)
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	return nc
}

// exchange starts a Thalex test exchange.
func exchange(t testing.TB) *exchangetest.Server {
	t.Helper()
	ex := exchangetest.NewServer(thalex.Name)
	t.Cleanup(ex.Close)
	return ex
}

// feedTopics are the ten topics of a feed over five instruments.
func startFeed(ex *exchangetest.Server, every time.Duration) []string {
	ex.StartFeed(exchangetest.FeedOptions{
		Instruments: []string{"BTC-PERPETUAL", "ETH-PERPETUAL", "SOL-PERPETUAL", "XRP-PERPETUAL", "DOGE-PERPETUAL"},
		Interval:    every,
	})
	return ex.FeedTopics()
}

// join makes a member of group. A candidate dials ex (when ex is not
// nil), through a tagging upstream that prefixes every payload with the
// member's id and '|', so consumers can tell which leader sent what.
func join(t testing.TB, nc *nats.Conn, group, id string, ex *exchangetest.Server, opts ...natsbridge.Option) *natsbridge.Member {
	t.Helper()
	all := []natsbridge.Option{
		natsbridge.WithLogger(zaptest.NewLogger(t, zaptest.Level(zap.InfoLevel)).With(zap.String("m", id))),
		natsbridge.WithMemberID(id),
		natsbridge.WithLeaseTTL(time.Second),
		natsbridge.WithRequestTimeout(5 * time.Second),
		natsbridge.WithProtocol(thalex.Protocol()), // a candidate's (join's and joinVia's upstreams are Thalex's)
	}
	if ex != nil {
		all = append(all, natsbridge.WithUpstream(tagged(id, natsbridge.DialClient(ex.URL(),
			client.WithProtocol(thalex.Protocol()),
			client.WithBackoff(fastBackoff)))))
	}
	all = append(all, opts...)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	m, err := natsbridge.Join(ctx, nc, group, all...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = m.Close() })
	return m
}

// leaderOf returns the member that leads, waiting for exactly one.
func leaderOf(t testing.TB, ms ...*natsbridge.Member) *natsbridge.Member {
	t.Helper()
	var leader *natsbridge.Member
	require.Eventually(t, func() bool {
		leader = nil
		n := 0
		for _, m := range ms {
			if m.Status().Leader {
				leader = m
				n++
			}
		}
		return n == 1
	}, 10*time.Second, 5*time.Millisecond, "no single leader")
	return leader
}

// tagged wraps a Dialer so that every payload starts with "tag|".
func tagged(tag string, d natsbridge.Dialer) natsbridge.Dialer {
	return func(ctx context.Context) (client.Holder, error) {
		up, err := d(ctx)
		if err != nil {
			return nil, err
		}
		return taggedUpstream{Holder: up, tag: tag}, nil
	}
}

type taggedUpstream struct {
	client.Holder
	tag string
}

func (u taggedUpstream) SubscribeTopics(ctx context.Context, topics []*protocol.Topic) ([]client.Stream, []error, error) {
	streams, errs, err := u.Holder.SubscribeTopics(ctx, topics)
	if err != nil {
		return nil, nil, err
	}
	for i, f := range streams {
		if f == nil {
			continue
		}
		tf := &taggedFeed{in: f, out: make(chan client.Message, 64), errc: make(chan error, 1), quit: make(chan struct{})}
		go tf.run(u.tag)
		streams[i] = tf
	}
	return streams, errs, nil
}

// taggedFeed copies its upstream feed, prefixing payloads; its goroutine
// ends when the upstream feed does or Unsubscribe is called.
type taggedFeed struct {
	in       client.Stream
	out      chan client.Message
	errc     chan error
	quit     chan struct{}
	quitOnce sync.Once
}

func (f *taggedFeed) run(tag string) {
	defer close(f.errc)
	defer close(f.out)
	for m := range f.in.C() {
		m.Data = append([]byte(tag+"|"), m.Data...)
		select {
		case f.out <- m:
		case <-f.quit:
			return
		}
	}
	if err, ok := <-f.in.Err(); ok && err != nil {
		f.errc <- err
	}
}

func (f *taggedFeed) C() <-chan client.Message { return f.out }
func (f *taggedFeed) Err() <-chan error        { return f.errc }

// Dropped is the upstream feed's count: the copy drops nothing itself.
func (f *taggedFeed) Dropped() uint64 { return f.in.Dropped() }
func (f *taggedFeed) Unsubscribe(ctx context.Context) error {
	f.quitOnce.Do(func() { close(f.quit) })
	return f.in.Unsubscribe(ctx)
}

// source returns who published a tagged payload.
func source(m client.Message) string {
	for i, c := range m.Data {
		if c == '|' {
			return string(m.Data[:i])
		}
	}
	return ""
}

// fastBackoff reconnects the upstream client quickly.
func fastBackoff() backoff.BackOff {
	b := backoff.NewExponentialBackOff()
	b.InitialInterval = 20 * time.Millisecond
	b.MaxInterval = 200 * time.Millisecond
	b.MaxElapsedTime = 0
	b.Reset()
	return b
}

// sampler polls the exchange every millisecond and keeps the most
// connections and the most subscribers of any topic it saw at once.
type sampler struct {
	maxConns, maxSubs atomic.Int64
	stop              chan struct{}
	done              chan struct{}
	once              sync.Once
}

func sample(ex *exchangetest.Server, topics []string) *sampler {
	s := &sampler{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-t.C:
			}
			if n := int64(ex.Connections()); n > s.maxConns.Load() {
				s.maxConns.Store(n)
			}
			for _, topic := range topics {
				if n := int64(ex.Subscribers(topic)); n > s.maxSubs.Load() {
					s.maxSubs.Store(n)
				}
			}
		}
	}()
	return s
}

// close stops sampling; safe to call more than once.
func (s *sampler) close() {
	s.once.Do(func() { close(s.stop) })
	<-s.done
}

// proxy is a loopback TCP proxy to a NATS server that can be cut: Break
// closes every proxied connection and refuses new ones until Heal.
type proxy struct {
	t      testing.TB
	target string
	addr   string

	mu    sync.Mutex
	l     net.Listener
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup
}

func newProxy(t testing.TB, target string) *proxy {
	t.Helper()
	p := &proxy{t: t, target: target, conns: make(map[net.Conn]struct{})}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p.addr = l.Addr().String()
	p.serve(l)
	t.Cleanup(p.close)
	return p
}

func (p *proxy) url() string { return "nats://" + p.addr }

func (p *proxy) serve(l net.Listener) {
	p.mu.Lock()
	p.l = l
	p.mu.Unlock()
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", p.target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			if p.l != l { // broken while this one was being accepted
				p.mu.Unlock()
				c.Close()
				up.Close()
				continue
			}
			p.conns[c], p.conns[up] = struct{}{}, struct{}{}
			p.mu.Unlock()
			p.wg.Add(2)
			go p.pipe(c, up)
			go p.pipe(up, c)
		}
	}()
}

func (p *proxy) pipe(dst, src net.Conn) {
	defer p.wg.Done()
	_, _ = io.Copy(dst, src)
	dst.Close()
	src.Close()
}

// Break stops listening, then cuts every connection (in that order, so
// a client reconnecting at once finds nobody listening). A connection
// accepted meanwhile is cut by serve.
func (p *proxy) Break() {
	p.mu.Lock()
	l := p.l
	p.l = nil
	p.mu.Unlock()
	if l != nil {
		l.Close()
	}
	p.mu.Lock()
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
	p.mu.Unlock()
}

// Heal listens again on the same address.
func (p *proxy) Heal() {
	var l net.Listener
	require.Eventually(p.t, func() bool {
		var err error
		l, err = net.Listen("tcp", p.addr)
		return err == nil
	}, 5*time.Second, 10*time.Millisecond)
	p.serve(l)
}

func (p *proxy) close() {
	p.Break()
	p.wg.Wait()
}

// collector reads a subscription into a slice until it ends.
type collector struct {
	mu   sync.Mutex
	msgs []client.Message
	done chan struct{}
	err  error
}

func collect(sub client.Stream) *collector {
	c := &collector{done: make(chan struct{})}
	go func() {
		defer close(c.done)
		for m := range sub.C() {
			c.mu.Lock()
			c.msgs = append(c.msgs, m)
			c.mu.Unlock()
		}
		if err, ok := <-sub.Err(); ok {
			c.err = err
		}
	}()
	return c
}

func (c *collector) snapshot() []client.Message {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]client.Message(nil), c.msgs...)
}

// count returns how many messages arrived per topic.
func (c *collector) count() map[string]int {
	n := make(map[string]int)
	for _, m := range c.snapshot() {
		n[m.Topic]++
	}
	return n
}

// waitEach waits until every topic got at least n more messages than
// in base.
func (c *collector) waitEach(t testing.TB, topics []string, base map[string]int, n int, within time.Duration) {
	t.Helper()
	require.Eventually(t, func() bool {
		got := c.count()
		for _, topic := range topics {
			if got[topic] < base[topic]+n {
				return false
			}
		}
		return true
	}, within, 5*time.Millisecond, "not every topic got %d messages", n)
}

var errNoMessage = errors.New("no message")

// next waits for the next message on a subscription.
func next(sub client.Stream, within time.Duration) (client.Message, error) {
	select {
	case m, ok := <-sub.C():
		if !ok {
			return m, errors.New("subscription ended")
		}
		return m, nil
	case <-time.After(within):
		return client.Message{}, errNoMessage
	}
}
