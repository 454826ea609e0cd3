package reliability_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/faultproxy"
	"github.com/wsfan/wsfan/internal/sidecartest"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/deribit"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/sidecar"
)

// route is where the fault proxy sits.
type route int

const (
	direct     route = iota // SDK → proxy → exchange
	viaSidecar              // SDK → sidecar → proxy → exchange
	routes
)

func (r route) String() string { return [...]string{"SDK", "SDK via sidecar"}[r] }

// fault is one Toxiproxy fault, applied to the proxy while traffic flows.
type fault struct {
	name  string
	apply func(p *faultproxy.Proxy)
}

// settings are a run's timings: the defaults for the table, fast ones
// for the tests CI runs.
type settings struct {
	client   []client.Option       // the SDK's (directly), or the sidecar's upstream client's
	upstream func(*sidecar.Config) // the sidecar's settings beside them
	warm     time.Duration         // traffic before the fault
	hold     time.Duration         // how long the fault stays
	settle   time.Duration         // the longest wait for every topic after the heal
	callTTL  time.Duration         // each call's deadline
}

// result is what one scenario measured.
type result struct {
	noticed   time.Duration // fault applied → the SDK (or the sidecar) says the upstream is gone; 0: never
	recovered time.Duration // heal → every topic delivers again; 0: not within settle
	published int
	received  int
	lost      int // messages never received
	holes     int // runs of lost messages
	unmarked  int // holes whose next message carries no flag
	calls     int
	failed    int
	failFast  time.Duration // the slowest failed call
	late      int           // calls that returned over 100ms after their deadline
	sentLate  int           // calls the exchange read after their caller's deadline
	restored  bool          // every topic delivered after the heal
	lastErr   error         // the last call's failure
	cause     string        // why the link was dropped, as the SDK (or the sidecar's status) said

	// Behind the sidecar: the holes a plain WebSocket program (that
	// asked for gap notices) and an SSE stream saw, and how many of them
	// nothing marked.
	wsHoles, wsUnmarked   int
	sseHoles, sseUnmarked int
}

// Topic names and traffic: 7 topics, a round every 20 ms, about 350
// messages a second, each message about 150 bytes.
const (
	nTopics      = 7
	publishEvery = 20 * time.Millisecond
	callEvery    = 250 * time.Millisecond
)

var topics = func() []string {
	out := make([]string, nTopics)
	for i := range out {
		out[i] = fmt.Sprintf("ticker.R%d-PERPETUAL.100ms", i)
	}
	return out
}()

var pad = strings.Repeat("x", 120)

// run plays one scenario and returns what it measured.
func run(t *testing.T, rt route, f fault, s settings) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), s.warm+s.hold+s.settle+30*time.Second)
	defer cancel()

	exch := exchangetest.NewServer(deribit.Name)
	t.Cleanup(exch.Close)
	var sentLate atomic.Int64
	exch.Handle("private/buy", func(params json.RawMessage) (any, *protocol.Error) {
		var p struct {
			Deadline int64 `json:"deadline"`
		}
		if json.Unmarshal(params, &p) == nil && time.Now().UnixNano() > p.Deadline {
			sentLate.Add(1)
		}
		return "ok", nil
	})
	proxy := faultproxy.Start(t, exch.Addr())
	upURL := proxy.URL(exch.URL())

	var res result
	var c *client.Client
	var sc *sidecartest.Served
	var err error
	switch rt {
	case direct:
		c, err = client.Dial(ctx, upURL, append([]client.Option{client.WithProtocol(deribit.Protocol())}, s.client...)...)
	case viaSidecar:
		cfg := sidecar.Config{Upstream: upURL, Protocol: deribit.Name, UpstreamOptions: s.client}
		if s.upstream != nil {
			s.upstream(&cfg)
		}
		sc = sidecartest.Serve(t, cfg)
		for !sc.Ready() && ctx.Err() == nil {
			time.Sleep(10 * time.Millisecond)
		}
		c, err = client.Dial(ctx, "ws://"+sc.Addr+"/ws", client.WithProtocol(deribit.Protocol()))
	}
	require.NoError(t, err)
	defer func() { _ = c.Close() }()
	sub, err := c.Subscribe(ctx, topics, client.Buffer(1<<16), client.Overflow(client.Block))
	require.NoError(t, err)
	// Behind the sidecar, a plain WebSocket program that asked for gap
	// notices and an SSE stream watch the same topics.
	watchCtx, stopWatching := context.WithCancel(ctx)
	defer stopWatching()
	var wsHoles, sseHoles *holes
	var wsDone, sseDone <-chan struct{}
	if rt == viaSidecar {
		wsHoles, wsDone = watchWS(t, watchCtx, sc.Addr, topics)
		sseHoles, sseDone = watchSSE(t, watchCtx, sc.Addr, topics)
	}
	for _, topic := range topics {
		require.NoError(t, exch.WaitSubscribers(ctx, topic, 1))
	}

	// The publisher: numbered messages on every topic.
	var published atomic.Int64
	stopPublishing := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(publishEvery)
		defer tick.Stop()
		for n := 1; ; n++ {
			select {
			case <-stopPublishing:
				return
			case <-tick.C:
			}
			for _, topic := range topics {
				exch.Publish(topic, []byte(`{"n":`+strconv.Itoa(n)+`,"pad":"`+pad+`"}`))
				published.Add(1)
			}
		}
	}()

	// The consumer: per topic, the numbers must follow; a hole must be
	// marked on the message after it.
	var healedAt atomic.Int64 // unix ns of the heal; 0 before
	var mu sync.Mutex
	last := make(map[string]int)
	after := make(map[string]bool) // topics that delivered since the heal
	allBack := make(chan time.Time, 1)
	consumed := make(chan struct{})
	go func() {
		defer close(consumed)
		for m := range sub.C() {
			var p struct{ N int }
			if json.Unmarshal(m.Data, &p) != nil {
				continue
			}
			mu.Lock()
			res.received++
			prev, seen := last[m.Topic]
			if seen && p.N > prev+1 {
				res.lost += p.N - prev - 1
				res.holes++
				if !m.Reconnected() && !m.Gap() && !m.Stale() {
					res.unmarked++
				}
			}
			last[m.Topic] = max(prev, p.N)
			if h := healedAt.Load(); h != 0 && m.RecvTime.UnixNano() > h && !after[m.Topic] {
				after[m.Topic] = true
				if len(after) == nTopics {
					allBack <- m.RecvTime
				}
			}
			mu.Unlock()
		}
	}()

	// The caller: a call every callEvery, its deadline in its params.
	stopCalling := make(chan struct{})
	var callMu sync.Mutex
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(callEvery)
		defer tick.Stop()
		for {
			select {
			case <-stopCalling:
				return
			case <-tick.C:
			}
			callCtx, cancel := context.WithTimeout(ctx, s.callTTL)
			deadline, _ := callCtx.Deadline()
			start := time.Now()
			_, err := c.CallRaw(callCtx, "private/buy", json.RawMessage(`{"deadline":`+strconv.FormatInt(deadline.UnixNano(), 10)+`}`))
			took := time.Since(start)
			cancel()
			callMu.Lock()
			res.calls++
			if took > s.callTTL+100*time.Millisecond {
				res.late++
			}
			if err != nil {
				res.failed++
				res.failFast = max(res.failFast, took)
				res.lastErr = err
			}
			callMu.Unlock()
		}
	}()

	sleep(ctx, s.warm)
	faultAt := time.Now()
	f.apply(proxy)
	noticed := make(chan notice, 1)
	go watchNotice(ctx, rt, c, sc, faultAt, noticed)
	sleep(ctx, s.hold)
	proxy.Heal()
	healedAt.Store(time.Now().UnixNano())
	select {
	case n := <-noticed:
		res.noticed, res.cause = n.after, n.cause
	default:
	}
	select {
	case at := <-allBack:
		res.recovered = at.Sub(time.Unix(0, healedAt.Load()))
		res.restored = true
	case <-time.After(s.settle):
	case <-ctx.Done():
	}
	close(stopCalling)
	close(stopPublishing)
	wg.Wait()
	sleep(ctx, 300*time.Millisecond) // what is in flight arrives
	_ = c.Close()
	<-consumed
	if rt == viaSidecar {
		stopWatching()
		<-wsDone
		<-sseDone
		res.wsHoles, res.wsUnmarked = wsHoles.counts()
		res.sseHoles, res.sseUnmarked = sseHoles.counts()
	}

	res.published = int(published.Load())
	res.sentLate = int(sentLate.Load())
	// Messages published after the last received one of a topic are
	// lost too (none, once every topic came back).
	mu.Lock()
	defer mu.Unlock()
	perTopic := res.published / nTopics
	for _, topic := range topics {
		if n := last[topic]; n < perTopic {
			res.lost += perTopic - n
		}
	}
	return res
}

// notice is when and why the loss was noticed.
type notice struct {
	after time.Duration
	cause string
}

// watchNotice reports how long after faultAt the SDK (directly) or the
// sidecar (its upstream) said the connection is gone, and why.
func watchNotice(ctx context.Context, rt route, c *client.Client, sc *sidecartest.Served, faultAt time.Time, noticed chan<- notice) {
	if rt == direct {
		for ev := range c.Events() {
			if ev.Kind == client.Disconnected {
				noticed <- notice{ev.Time.Sub(faultAt), ev.Err.Error()}
				return
			}
		}
		return
	}
	for ctx.Err() == nil {
		if st := sc.Status().Upstream; st.State != client.StateConnected.String() {
			noticed <- notice{time.Since(faultAt), st.LastError}
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-time.After(d):
	case <-ctx.Done():
	}
}
