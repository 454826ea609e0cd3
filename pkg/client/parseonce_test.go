package client_test

import (
	"context"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/sidecar"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// parseCounts counts, by topic name, the NewTopic calls of a counting
// dialect and the clash checks of the topics it made.
type parseCounts struct {
	mu      sync.Mutex
	made    map[*protocol.Topic]bool
	parsed  map[string]int
	checked map[string]int
}

func newParseCounts() *parseCounts {
	return &parseCounts{made: map[*protocol.Topic]bool{}, parsed: map[string]int{}, checked: map[string]int{}}
}

// check counts a clash check of t when the counting dialect made it (a
// test's other clients parse with dialects of their own).
func (pc *parseCounts) check(t *protocol.Topic) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if pc.made[t] {
		pc.checked[t.Name]++
	}
}

// reset forgets what was counted.
func (pc *parseCounts) reset() {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	clear(pc.parsed)
	clear(pc.checked)
}

// assertOnce asserts one NewTopic and one clash check of each topic.
func (pc *parseCounts) assertOnce(t *testing.T, what string, topics ...string) {
	t.Helper()
	want := map[string]int{}
	for _, name := range topics {
		want[name] = 1
	}
	pc.mu.Lock()
	defer pc.mu.Unlock()
	assert.Equal(t, want, pc.parsed, "%s: one NewTopic a topic", what)
	assert.Equal(t, want, pc.checked, "%s: one clash check a topic", what)
}

// countingDialect is Thalex's dialect counting the topics it parses.
type countingDialect struct {
	protocol.Protocol
	counts *parseCounts
}

func (d countingDialect) NewTopic(name string) (*protocol.Topic, error) {
	t, err := d.Protocol.NewTopic(name)
	d.counts.mu.Lock()
	defer d.counts.mu.Unlock()
	d.counts.parsed[name]++
	if t != nil {
		d.counts.made[t] = true
	}
	return t, err
}

// A topic is parsed once on its way to the upstream request, and
// clash-checked once, by SubscribeEach and by the Holder's
// SubscribeTopics: SubscribeStreams (what the sidecar's hub called)
// parsed and clash-checked each topic, then handed the names to
// SubscribeEach, which parsed and checked them again.
func TestSubscribeParsesEachTopicOnce(t *testing.T) {
	srv := newServer(t, thalex.Name)
	counts := newParseCounts()
	client.CountClashChecks(t, counts.check)
	d := countingDialect{Protocol: thalex.Protocol(thalex.WithNotices(false)), counts: counts}
	c := dial(t, srv, d)
	ctx := testutil.Context(t)

	each := []string{"ticker.A-PERPETUAL.raw", "ticker.B-PERPETUAL.raw"}
	subs, errs, err := c.SubscribeEach(ctx, each)
	require.NoError(t, err)
	require.Len(t, subs, 2)
	for _, e := range errs {
		require.NoError(t, e)
	}
	counts.assertOnce(t, "SubscribeEach", each...)

	counts.reset()
	parsed, err := d.NewTopic("ticker.C-PERPETUAL.raw") // as the sidecar's hub does
	require.NoError(t, err)
	streams, errs, err := c.SubscribeTopics(ctx, []*protocol.Topic{parsed})
	require.NoError(t, err)
	require.NoError(t, errs[0])
	require.NotNil(t, streams[0])
	counts.assertOnce(t, "SubscribeTopics", "ticker.C-PERPETUAL.raw")

	counts.reset()
	streams, errs, err = c.SubscribeStreams(ctx, []string{"ticker.D-PERPETUAL.raw"})
	require.NoError(t, err)
	require.NoError(t, errs[0])
	require.NotNil(t, streams[0])
	counts.assertOnce(t, "SubscribeStreams", "ticker.D-PERPETUAL.raw")
}

// sidecarCounts counts for the dialect countingThalex registers, which
// the sidecar of TestSidecarSubscribeParsesEachTopicOnce takes by name.
var (
	sidecarCounts   = newParseCounts()
	registerCounted sync.Once
)

// countingThalex is the registered name of Thalex's dialect counting
// into sidecarCounts; its halves name themselves "thalex", so the
// sidecar serves Thalex's wire.
const countingThalex = "thalex-counting"

// A local program's subscribe through a sidecar parses each topic once,
// in the sidecar's hub, and clash-checks it once, in the upstream
// client: the hub parsed the names to validate them, handed the names to
// the upstream client's SubscribeStreams, which parsed them again.
func TestSidecarSubscribeParsesEachTopicOnce(t *testing.T) {
	registerCounted.Do(func() {
		protocol.Register(protocol.Dialect{
			Name:     countingThalex,
			Protocol: func() protocol.Protocol { return countingDialect{Protocol: thalex.Protocol(), counts: sidecarCounts} },
			Server:   func() protocol.Server { return thalex.Server() },
		})
	})
	client.CountClashChecks(t, sidecarCounts.check)
	up := newServer(t, thalex.Name)
	sc, err := sidecar.New(sidecar.Config{Upstream: up.URL(), Protocol: countingThalex})
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	serveCtx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- sc.Serve(serveCtx, ln) }() // Serve closes the sidecar when serveCtx ends
	t.Cleanup(func() { stop(); <-served })

	ctx := testutil.Context(t)
	local, err := client.Dial(ctx, "ws://"+ln.Addr().String()+"/ws", client.WithProtocol(thalex.Protocol()))
	require.NoError(t, err)
	t.Cleanup(func() { _ = local.Close() })
	sidecarCounts.reset()
	topics := []string{"ticker.A-PERPETUAL.raw", "ticker.B-PERPETUAL.raw", "ticker.C-PERPETUAL.raw"}
	sub, err := local.Subscribe(ctx, topics)
	require.NoError(t, err)
	require.NoError(t, up.WaitSubscribers(ctx, topics[2], 1))
	sidecarCounts.assertOnce(t, "a sidecar subscribe", topics...)
	require.NoError(t, sub.Unsubscribe(ctx))

	// A book asked over HTTP: /v1/book validated the name, then the hub
	// parsed it again.
	up.StartFeed(exchangetest.FeedOptions{Instruments: []string{"A-PERPETUAL"}, Interval: 5 * time.Millisecond})
	sidecarCounts.reset()
	const bookTopic = "book.A-PERPETUAL.none.10.100ms"
	resp, err := http.Get("http://" + ln.Addr().String() + "/v1/book?topic=" + bookTopic)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	sidecarCounts.assertOnce(t, "a book over HTTP", bookTopic)
}
