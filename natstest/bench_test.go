package natstest

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/natsbridge"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// frameSize is a realistic order-book notification payload.
const frameSize = 615

// batch is how many messages the publisher sends before it waits for
// every consumer to have received them, so neither path overruns a
// consumer (core NATS would drop) and both are measured alike.
const batch = 256

// BenchmarkFanout measures deliveries per second from one upstream
// through NATS to 1, 10 and 100 consumers, each on its own NATS
// connection: impl=wsfan is a leader publishing what its upstream feeds
// it (headers, last-value cache) and natsbridge subscriptions (dedupe,
// client.Message on a channel); impl=nats is plain nats.go publish and
// subscribe with the same headers, the floor.
func BenchmarkFanout(b *testing.B) {
	for _, n := range []int{1, 10, 100} {
		b.Run(fmt.Sprintf("consumers=%d/impl=wsfan", n), func(b *testing.B) { benchWsfan(b, n) })
		b.Run(fmt.Sprintf("consumers=%d/impl=nats", n), func(b *testing.B) { benchNATS(b, n) })
	}
}

// BenchmarkLatency measures one message's trip, upstream to consumer,
// with nothing else in flight: p50 and p99 of the hop NATS adds
// (impl=nats) and of the whole bridge path (impl=wsfan).
func BenchmarkLatency(b *testing.B) {
	b.Run("impl=wsfan", func(b *testing.B) { benchWsfan(b, 0) })
	b.Run("impl=nats", func(b *testing.B) { benchNATS(b, 0) })
}

// fanout is one benchmark run's publisher side: send publishes one
// message; consumers signal ready each time they have received another
// batch (or, for latency, every message).
type fanout struct {
	send  func(data []byte)
	ready chan struct{}
	lat   []time.Duration // first consumer only
}

// run publishes b.N messages (rounded up to whole batches; latency mode
// publishes one at a time and records each trip) and reports the rate.
func (f *fanout) run(b *testing.B, consumers int, recv *atomic.Int64) {
	per := batch
	if consumers == 0 {
		consumers, per = 1, 1
	}
	payload := make([]byte, frameSize)
	publish := func(k int) {
		for range k {
			data := slices.Clone(payload) // the upstream hands over a fresh frame
			binary.LittleEndian.PutUint64(data, uint64(time.Now().UnixNano()))
			f.send(data)
		}
		for range consumers {
			select {
			case <-f.ready:
			case <-time.After(30 * time.Second):
				b.Fatalf("consumers stalled: %d deliveries", recv.Load())
			}
		}
	}
	publish(per) // warm up: every consumer is live
	f.lat = f.lat[:0]
	recv.Store(0)
	b.ReportAllocs()
	b.ResetTimer()
	sent := 0
	for sent < b.N {
		publish(per)
		sent += per
	}
	b.StopTimer()
	if per == 1 {
		slices.Sort(f.lat)
		b.ReportMetric(float64(f.lat[len(f.lat)/2].Microseconds()), "p50-µs")
		b.ReportMetric(float64(f.lat[(len(f.lat)*99)/100].Microseconds()), "p99-µs")
		return
	}
	b.ReportMetric(float64(recv.Load())/b.Elapsed().Seconds(), "deliveries/s")
}

// onReceive is a consumer's bookkeeping.
func (f *fanout) onReceive(first bool, count int64, data []byte, per int) {
	if first && per == 1 {
		sent := int64(binary.LittleEndian.Uint64(data))
		f.lat = append(f.lat, time.Duration(time.Now().UnixNano()-sent))
	}
	if count%int64(per) == 0 {
		f.ready <- struct{}{}
	}
}

func benchNATS(b *testing.B, consumers int) {
	ns := startNATS(b)
	per, n := batch, consumers
	if consumers == 0 {
		per, n = 1, 1
	}
	f := &fanout{ready: make(chan struct{}, n)}
	var recv atomic.Int64
	for i := range n {
		nc := connect(b, ns.url())
		var count int64
		_, err := nc.Subscribe("plain.t.book", func(m *nats.Msg) {
			count++
			recv.Add(1)
			f.onReceive(i == 0, count, m.Data, per)
		})
		require.NoError(b, err)
		require.NoError(b, nc.Flush())
	}
	pub := connect(b, ns.url())
	var seq uint64
	msg := &nats.Msg{Subject: "plain.t.book", Header: nats.Header{
		natsbridge.HeaderEpoch: []string{"7"},
		natsbridge.HeaderSeq:   []string{""},
	}}
	f.send = func(data []byte) {
		seq++
		msg.Header[natsbridge.HeaderSeq][0] = strconv.FormatUint(seq, 10)
		msg.Data = data
		if err := pub.PublishMsg(msg); err != nil {
			b.Fatal(err)
		}
	}
	f.run(b, consumers, &recv)
}

func benchWsfan(b *testing.B, consumers int) {
	ns := startNATS(b)
	per, n := batch, consumers
	if consumers == 0 {
		per, n = 1, 1
	}
	up := newBenchUpstream()
	// A long lease: two busy cores can starve a renewal for TTL/2 = 500ms,
	// and failover is not what this measures.
	quiet := natsbridge.WithLogger(zap.NewNop())
	leader := join(b, connect(b, ns.url()), "bench", "leader", nil, quiet,
		natsbridge.WithLeaseTTL(10*time.Second), natsbridge.WithUpstream(up.dial))
	leaderOf(b, leader)
	f := &fanout{ready: make(chan struct{}, n)}
	var recv atomic.Int64
	var wg sync.WaitGroup
	b.Cleanup(wg.Wait) // after the consumers' Close: cleanups run last-in first-out
	ctx := context.Background()
	for i := range n {
		m := join(b, connect(b, ns.url()), "bench", fmt.Sprintf("c%d", i), nil, quiet)
		sub, err := m.Subscribe(ctx, "book.BTC-PERPETUAL.100ms")
		require.NoError(b, err)
		wg.Add(1)
		go func() {
			defer wg.Done()
			var count int64
			for msg := range sub.C() {
				count++
				recv.Add(1)
				f.onReceive(i == 0, count, msg.Data, per)
			}
		}()
	}
	select {
	case <-up.subscribed:
	case <-time.After(30 * time.Second):
		b.Fatal("the leader did not subscribe upstream")
	}
	f.send = func(data []byte) {
		up.feed <- client.Message{Topic: "book.BTC-PERPETUAL.100ms", Data: data}
	}
	f.run(b, consumers, &recv)
}

// benchUpstream is an in-memory upstream with one topic whose messages
// the benchmark sends on feed.
type benchUpstream struct {
	feed       chan client.Message
	errc       chan error // never yields: the feed does not end
	subscribed chan struct{}
	once       sync.Once
	closed     atomic.Bool
}

func newBenchUpstream() *benchUpstream {
	return &benchUpstream{
		feed:       make(chan client.Message, batch),
		errc:       make(chan error),
		subscribed: make(chan struct{}),
	}
}

// dial hands out the upstream once: a second term (the lease lost on a
// starved machine) finds it closed.
func (u *benchUpstream) dial(context.Context) (client.Holder, error) {
	if u.closed.Load() {
		return nil, errors.New("benchmark upstream closed")
	}
	return u, nil
}

func (u *benchUpstream) SubscribeTopics(_ context.Context, topics []*protocol.Topic) ([]client.Stream, []error, error) {
	u.once.Do(func() { close(u.subscribed) })
	return []client.Stream{benchFeed{u}}, make([]error, len(topics)), nil
}

func (u *benchUpstream) UnsubscribeStreams(context.Context, []client.Stream) error { return nil }

func (u *benchUpstream) CallRaw(context.Context, string, json.RawMessage) (json.RawMessage, error) {
	return nil, client.ErrConnectionLost
}

// State is connected until Close.
func (u *benchUpstream) State() client.State {
	if u.closed.Load() {
		return client.StateClosed
	}
	return client.StateConnected
}

// Close leaves the feed open: the leader stops reading it when its term
// ends, and a benchmark still sending then stalls and fails.
func (u *benchUpstream) Close() error {
	u.closed.Store(true)
	return nil
}

// Events, Stale, Silent and Resync: a benchmark's upstream reports
// nothing and is always healthy.
func (u *benchUpstream) Events() <-chan client.Event { return nil }
func (u *benchUpstream) Stale(string) bool           { return false }
func (u *benchUpstream) Silent(string) bool          { return false }
func (u *benchUpstream) Resync(string) bool          { return false }

type benchFeed struct{ u *benchUpstream }

func (f benchFeed) C() <-chan client.Message          { return f.u.feed }
func (f benchFeed) Err() <-chan error                 { return f.u.errc }
func (f benchFeed) Unsubscribe(context.Context) error { return nil }
func (f benchFeed) Dropped() uint64                   { return 0 }
