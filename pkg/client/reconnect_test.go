package client_test

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/protocol/protocoltest"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// The server dies with a call in flight: the call fails at once with
// ErrConnectionLost, a call made during the outage fails at once too, and
// the subscription survives and flows again once the server is back.
func TestServerKilledFailsPendingCallsAtOnce(t *testing.T) {
	for _, kill := range []string{"stop", "drop"} {
		for _, d := range dialects[:3] { // Ethereal has no calls
			t.Run(kill+"/"+d.name, func(t *testing.T) {
				srv := newServer(t, d.server)
				srv.Handle("slow", func(json.RawMessage) (any, *protocol.Error) { return "late", nil })
				// The outage lasts until the test says so: the delay only
				// keeps the reconnect away while the call's delay is reset.
				c := dial(t, srv, d.proto(), constantBackoff(50*time.Millisecond))
				ctx := testutil.Context(t)
				sub, err := c.Subscribe(ctx, []string{d.topics[0]})
				require.NoError(t, err)

				srv.SetResponseDelay(time.Hour)
				errc := make(chan error, 1)
				go func() { errc <- c.Call(ctx, "slow", nil, nil) }()
				require.NoError(t, srv.WaitReceived(ctx, "slow", 1))

				start := time.Now()
				if kill == "stop" {
					srv.Stop()
				} else {
					srv.DropConnections()
				}
				select {
				case err := <-errc:
					require.ErrorIs(t, err, client.ErrConnectionLost)
					assert.NotErrorIs(t, err, client.ErrTimeout)
					assert.Less(t, time.Since(start), time.Second, "the pending call fails at once")
				case <-time.After(5 * time.Second):
					t.Fatal("pending call still blocked 5s after the connection died")
				}
				srv.SetResponseDelay(0)

				ev := waitEvent(t, c, client.Disconnected)
				require.Error(t, ev.Err)
				if kill == "stop" {
					// Nothing listens: a call now fails at once, never sent late.
					start = time.Now()
					err := c.Call(ctx, "slow", nil, nil)
					require.ErrorIs(t, err, client.ErrConnectionLost)
					assert.Less(t, time.Since(start), 100*time.Millisecond)
					assert.Contains(t, []client.State{client.StateReconnecting, client.StateConnecting}, c.State())
					requireOpen(t, sub)
					require.NoError(t, srv.Start())
				}

				waitEvent(t, c, client.Resubscribed)
				assert.Equal(t, client.StateConnected, c.State())
				requireOpen(t, sub)
				require.NoError(t, srv.WaitSubscribers(ctx, d.topics[0], 1))
				srv.Publish(d.topics[0], payload(d.name, d.topics[0], 1))
				m := receive(t, sub)
				assert.True(t, m.Reconnected(), "first message after the reconnect is flagged")
				assert.Equal(t, uint64(1), m.Seq)
				require.NoError(t, c.Call(ctx, "slow", nil, nil))
			})
		}
	}
}

// The server is restarted on the same port: every topic of every
// subscription comes back with exactly one subscribe frame, events tell
// the story in order, and the first message of each topic is flagged.
func TestRestartRestoresEveryTopicInOneFrame(t *testing.T) {
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			srv := newServer(t, d.server)
			c := dial(t, srv, d.proto(), fastBackoff())
			ctx := testutil.Context(t)
			a, err := c.Subscribe(ctx, []string{d.topics[0], d.topics[1]})
			require.NoError(t, err)
			b, err := c.Subscribe(ctx, []string{d.topics[2]})
			require.NoError(t, err)
			for _, topic := range d.topics {
				require.NoError(t, srv.WaitSubscribers(ctx, topic, 1))
				srv.Publish(topic, payload(d.name, topic, 1))
			}
			assert.Equal(t, uint64(1), receive(t, a).Seq)
			assert.Equal(t, uint64(2), receive(t, a).Seq)
			assert.Equal(t, uint64(1), receive(t, b).Seq)
			drainEvents(c)

			srv.Stop()
			srv.ResetReceived()
			disconnected := waitEvent(t, c, client.Disconnected)
			require.Error(t, disconnected.Err)
			require.NoError(t, srv.Start())

			evs := append([]client.Event{disconnected}, eventsUntil(t, c, client.Resubscribed)...)
			assert.Equal(t, []client.EventKind{client.Disconnected, client.Reconnecting, client.Connected, client.Resubscribed}, kindsOf(evs))
			attempt := 0
			for _, ev := range evs {
				if ev.Kind == client.Reconnecting {
					attempt++
					assert.Equal(t, attempt, ev.Attempt)
					assert.Error(t, ev.Err, "Reconnecting carries the cause")
				}
			}
			assert.Equal(t, 3, evs[len(evs)-1].Topics)

			for _, topic := range d.topics {
				require.NoError(t, srv.WaitSubscribers(ctx, topic, 1))
			}
			// Ethereal has no batches: its frames go out in one flush.
			want := 1
			if d.name == "ethereal" {
				want = len(d.topics)
			}
			assert.Equal(t, want, srv.CountReceived(subscribeMethod(d.name)), "subscribe frames after the restart")

			for n := 2; n <= 3; n++ {
				for _, topic := range d.topics {
					srv.Publish(topic, payload(d.name, topic, n))
				}
			}
			seq := map[*client.Subscription]uint64{a: 2, b: 1}
			for n := 2; n <= 3; n++ {
				for _, sub := range []*client.Subscription{a, a, b} {
					m := receive(t, sub)
					seq[sub]++
					assert.Equal(t, seq[sub], m.Seq, "Seq continues across the reconnect")
					assert.Equal(t, n == 2, m.Reconnected(), "only the first message of each topic is flagged: %s #%d", m.Topic, n)
				}
			}
		})
	}
}

// manyTopics returns n distinct topics of a dialect.
func manyTopics(dialect string, n int) []string {
	topics := make([]string, n)
	for i := range topics {
		switch dialect {
		case "ethereum":
			topics[i] = fmt.Sprintf(`["logs",{"address":"0x%x"}]`, i)
		case "ethereal":
			topics[i] = fmt.Sprintf("L2Book:S%05d", i)
		default:
			topics[i] = fmt.Sprintf("ticker.I%d-PERPETUAL.raw", i)
		}
	}
	return topics
}

// 1,000 topics, in one subscription or in a thousand, come back after a
// restart in as few subscribe frames as the dialect's request limits
// allow (one for Thalex; 250 channels a request for Deribit, 20 calls a
// batch for Ethereum), or ceil(1000/chunk) frames with
// WithResubscribeChunk, and every one of them delivers again.
func TestThousandTopicsRestored(t *testing.T) {
	const n = 1000
	cases := []struct {
		name    string
		dialect int // index in dialects
		many    bool
		chunk   int
	}{
		{"thalex/one-subscription", 0, false, 0},
		{"thalex/many-subscriptions", 0, true, 0},
		{"thalex/chunked", 0, false, 100},
		{"deribit/one-subscription", 1, false, 0},
		{"ethereum/one-subscription", 2, false, 0},
		{"ethereum/many-subscriptions", 2, true, 0},
		{"ethereum/chunked", 2, false, 128},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := dialects[tc.dialect]
			var srvOpts []exchangetest.Option
			// The restore's frames alone: no backfill of the Ethereum logs
			// topics (internal/recovery, tested on its own).
			opts := []client.Option{fastBackoff(), client.Buffer(2 * n), client.WithBackfill(0)}
			if tc.chunk > 0 {
				srvOpts = append(srvOpts, exchangetest.WithBatchCap(tc.chunk))
				opts = append(opts, client.WithResubscribeChunk(tc.chunk))
			}
			srv := newServer(t, d.server, srvOpts...)
			c := dial(t, srv, d.proto(), opts...)
			ctx := testutil.Context(t)
			topics := manyTopics(d.name, n)

			subs := map[string]*client.Subscription{}
			if tc.many {
				var mu sync.Mutex
				var wg sync.WaitGroup
				errs := make(chan error, n)
				for w := range 8 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for i := w; i < n; i += 8 {
							sub, err := c.Subscribe(ctx, []string{topics[i]})
							if err != nil {
								errs <- err
								return
							}
							mu.Lock()
							subs[topics[i]] = sub
							mu.Unlock()
						}
					}()
				}
				wg.Wait()
				close(errs)
				require.NoError(t, <-errs)
			} else {
				sub, err := c.Subscribe(ctx, topics)
				require.NoError(t, err)
				for _, topic := range topics {
					subs[topic] = sub
				}
			}
			drainEvents(c)

			srv.Stop()
			srv.ResetReceived()
			waitEvent(t, c, client.Disconnected)
			require.NoError(t, srv.Start())
			ev := waitEvent(t, c, client.Resubscribed)
			assert.Equal(t, n, ev.Topics)

			frames := restoreFrames(t, d.proto(), topics, tc.chunk)
			assert.Equal(t, frames, srv.CountReceived(subscribeMethod(d.name)), "subscribe frames after the restart")
			assert.Len(t, srv.Received(), frames+len(d.proto().Handshake()), "nothing else was sent")

			for _, topic := range topics {
				require.Equal(t, 1, srv.Subscribers(topic), topic)
				srv.Publish(topic, payload(d.name, topic, 1))
			}
			got := map[string]bool{}
			for _, topic := range topics {
				m := receive(t, subs[topic])
				assert.True(t, m.Reconnected(), m.Topic)
				got[m.Topic] = true
			}
			assert.Len(t, got, n, "every topic delivered once")
		})
	}
}

// A server that drops every connection as soon as it is made: the client
// keeps up without growing goroutines, and its waits are jittered.
func TestFlappingServer(t *testing.T) {
	d := dialects[0]
	srv := newServer(t, d.server)
	c := dial(t, srv, d.proto(), fastBackoff())
	ctx := testutil.Context(t)
	sub, err := c.Subscribe(ctx, d.topics)
	require.NoError(t, err)
	drainEvents(c)
	base := runtime.NumGoroutine()

	const flaps = 20
	var waits []time.Duration
	for range flaps {
		require.NoError(t, srv.WaitConnections(ctx, 1))
		srv.DropConnections()
		for _, ev := range eventsUntil(t, c, client.Resubscribed) {
			if ev.Kind == client.Reconnecting {
				waits = append(waits, ev.Wait)
			}
		}
	}
	require.GreaterOrEqual(t, len(waits), flaps)
	distinct := map[time.Duration]bool{}
	for _, w := range waits {
		distinct[w] = true
		// fastBackoff: 5ms doubling to 20ms, ±50%.
		assert.GreaterOrEqual(t, w, 2*time.Millisecond)
		assert.LessOrEqual(t, w, 30*time.Millisecond)
	}
	assert.Greater(t, len(distinct), flaps/2, "waits are jittered: %v", waits)

	// Polled on this goroutine: require.Eventually would add its own.
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > base && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > base {
		buf := make([]byte, 1<<20)
		t.Fatalf("goroutines grew from %d to %d:\n%s", base, n, buf[:runtime.Stack(buf, true)])
	}

	for _, topic := range d.topics {
		require.NoError(t, srv.WaitSubscribers(ctx, topic, 1))
		srv.Publish(topic, payload(d.name, topic, 1))
	}
	for range d.topics {
		assert.True(t, receive(t, sub).Reconnected())
	}
}

// Close while the client waits out a long backoff returns at once.
func TestCloseWhileWaitingInBackoff(t *testing.T) {
	srv := newServer(t, thalex.Name)
	c := dial(t, srv, dialects[0].proto(), constantBackoff(time.Hour))
	sub, err := c.Subscribe(testutil.Context(t), []string{dialects[0].topics[0]})
	require.NoError(t, err)
	srv.Stop()
	ev := waitEvent(t, c, client.Reconnecting)
	assert.Equal(t, time.Hour, ev.Wait)
	assert.Equal(t, client.StateReconnecting, c.State())

	start := time.Now()
	require.NoError(t, c.Close())
	assert.Less(t, time.Since(start), 500*time.Millisecond)
	requireClosed(t, c, sub)
}

// Close while a dial hangs (the port accepts TCP and never upgrades)
// returns at once, long before the dial timeout.
func TestCloseWhileDialing(t *testing.T) {
	srv := newServer(t, thalex.Name)
	c := dial(t, srv, dialects[0].proto(), fastBackoff(), client.WithDialTimeout(10*time.Second))
	sub, err := c.Subscribe(testutil.Context(t), []string{dialects[0].topics[0]})
	require.NoError(t, err)
	addr := srv.Addr()
	srv.Stop()
	_, accepted := holdListener(t, addr)
	select {
	case <-accepted:
	case <-time.After(5 * time.Second):
		t.Fatal("the client did not dial again")
	}
	require.Eventually(t, func() bool { return c.State() == client.StateConnecting }, time.Second, time.Millisecond)

	start := time.Now()
	require.NoError(t, c.Close())
	assert.Less(t, time.Since(start), 500*time.Millisecond, "Close does not wait for the dial timeout")
	requireClosed(t, c, sub)
}

// Close while the on-connect hook runs (a login hanging on a server that
// does not answer) returns at once: the hook's context ends.
func TestCloseDuringOnConnectHook(t *testing.T) {
	srv := newServer(t, thalex.Name)
	var calls atomic.Int32
	hookErr := make(chan error, 1)
	hook := func(ctx context.Context, c *client.Client) error {
		if calls.Add(1) == 1 {
			return nil
		}
		srv.SetResponseDelay(time.Hour)
		err := c.Call(ctx, "public/login", nil, nil)
		hookErr <- err
		return err
	}
	c := dial(t, srv, dialects[0].proto(), fastBackoff(), client.WithOnConnect(hook))
	require.NoError(t, srv.WaitConnections(testutil.Context(t), 1))
	srv.DropConnections()
	require.NoError(t, srv.WaitReceived(testutil.Context(t), "public/login", 1))

	start := time.Now()
	require.NoError(t, c.Close())
	assert.Less(t, time.Since(start), 500*time.Millisecond)
	assert.Error(t, <-hookErr)
	assert.Equal(t, client.StateClosed, c.State())
}

// requireClosed checks what Close promises: state, subscription and
// Events channels closed, calls failing with ErrClosed.
func requireClosed(t *testing.T, c *client.Client, sub *client.Subscription) {
	t.Helper()
	assert.Equal(t, client.StateClosed, c.State())
	_, open := <-sub.C()
	assert.False(t, open, "subscription channel closed")
	for range c.Events() { // must end: Events is closed by Close
	}
	assert.ErrorIs(t, c.Call(context.Background(), "x", nil, nil), client.ErrClosed)
}

// A backoff that gives up ends the client: every subscription gets
// ErrConnectionLost, Events closes, calls fail with ErrClosed.
func TestGivingUpEndsSubscriptions(t *testing.T) {
	srv := newServer(t, thalex.Name)
	c := dial(t, srv, dialects[0].proto(), client.WithBackoff(func() backoff.BackOff {
		return backoff.WithMaxRetries(backoff.NewConstantBackOff(time.Millisecond), 3)
	}))
	sub, err := c.Subscribe(testutil.Context(t), []string{dialects[0].topics[0]})
	require.NoError(t, err)
	srv.Stop()

	evs := eventsUntil(t, c, client.Reconnecting)
	for len(evs) > 0 && evs[len(evs)-1].Attempt < 3 {
		evs = eventsUntil(t, c, client.Reconnecting)
	}
	select {
	case err := <-sub.Err():
		require.ErrorIs(t, err, client.ErrConnectionLost)
		assert.Contains(t, err.Error(), "gave up")
	case <-time.After(5 * time.Second):
		t.Fatal("subscription not ended after giving up")
	}
	requireClosed(t, c, sub)
	require.NoError(t, c.Close())
}

// The backoff starts over only after a connection stayed up for
// WithHealthyAfter; short-lived connections keep growing it.
func TestBackoffResetsAfterHealthyConnection(t *testing.T) {
	for _, tc := range []struct {
		healthy time.Duration
		fresh   int32 // backoffs made over three outages
	}{
		{time.Hour, 1},
		{time.Nanosecond, 3},
	} {
		t.Run(tc.healthy.String(), func(t *testing.T) {
			srv := newServer(t, thalex.Name)
			var made atomic.Int32
			c := dial(t, srv, dialects[0].proto(), client.WithHealthyAfter(tc.healthy),
				client.WithBackoff(func() backoff.BackOff {
					made.Add(1)
					return &backoff.ZeroBackOff{}
				}))
			// A subscription makes Resubscribed imply that the server
			// registered the new connection.
			_, err := c.Subscribe(testutil.Context(t), []string{dialects[0].topics[0]})
			require.NoError(t, err)
			drainEvents(c)
			for range 3 {
				require.NoError(t, srv.WaitConnections(testutil.Context(t), 1))
				srv.DropConnections()
				waitEvent(t, c, client.Resubscribed)
			}
			assert.Equal(t, tc.fresh, made.Load())
		})
	}
}

// A topic the server refuses after a restart ends the subscriptions that
// hold it with a *RefusedError naming it; the other subscriptions carry on
// and the refused subscription's other topics are released upstream.
func TestTopicRefusedOnRestoreEndsItsSubscription(t *testing.T) {
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			srv := newServer(t, d.server)
			c := dial(t, srv, d.proto(), fastBackoff())
			ctx := testutil.Context(t)
			doomed, err := c.Subscribe(ctx, []string{d.topics[0], d.topics[1]})
			require.NoError(t, err)
			alsoDoomed, err := c.Subscribe(ctx, []string{d.topics[0]})
			require.NoError(t, err)
			kept, err := c.Subscribe(ctx, []string{d.topics[2]})
			require.NoError(t, err)

			srv.Stop()
			srv.SetRefused(d.topics[0])
			require.NoError(t, srv.Start())
			ev := waitEvent(t, c, client.Resubscribed)
			assert.Equal(t, 2, ev.Topics, "restored: all but the refused topic")

			for _, sub := range []*client.Subscription{doomed, alsoDoomed} {
				select {
				case err := <-sub.Err():
					var refused *client.RefusedError
					require.ErrorAs(t, err, &refused)
					assert.Equal(t, []string{d.topics[0]}, refused.Topics)
				case <-time.After(5 * time.Second):
					t.Fatal("subscription holding a refused topic not ended")
				}
				_, open := <-sub.C()
				assert.False(t, open)
			}
			require.NoError(t, srv.WaitSubscribers(ctx, d.topics[1], 0))
			require.NoError(t, srv.WaitSubscribers(ctx, d.topics[2], 1))
			srv.Publish(d.topics[2], payload(d.name, d.topics[2], 1))
			assert.True(t, receive(t, kept).Reconnected())
			assert.Equal(t, 1, srv.Connections(), "a refusal is no reason to reconnect")
		})
	}
}

// Ethereum subscription ids change with every connection: after a
// restart the new ids route the notifications, and Unsubscribe releases
// the subscription with the new id (the server would keep it on an old
// one).
func TestEthereumIDsRemappedAfterRestart(t *testing.T) {
	d := dialects[2]
	srv := newServer(t, d.server)
	c := dial(t, srv, d.proto(), fastBackoff())
	ctx := testutil.Context(t)
	heads, err := c.Subscribe(ctx, []string{"newHeads"})
	require.NoError(t, err)
	logs, err := c.Subscribe(ctx, []string{d.topics[2], "newPendingTransactions"})
	require.NoError(t, err)
	require.NoError(t, srv.WaitSubscribers(ctx, "newHeads", 1))
	srv.Publish("newHeads", []byte(`{"number":"0x1"}`))
	assert.JSONEq(t, `{"number":"0x1"}`, string(receive(t, heads).Data))

	for restart := range 2 {
		srv.Stop()
		srv.ResetReceived()
		require.NoError(t, srv.Start())
		waitEvent(t, c, client.Resubscribed)
		assert.Equal(t, 1, srv.CountReceived("eth_subscribe"), "one batch array")
		for _, topic := range []string{"newHeads", d.topics[2], "newPendingTransactions"} {
			require.NoError(t, srv.WaitSubscribers(ctx, topic, 1))
		}
		n := fmt.Sprintf(`{"number":"0x%d"}`, restart+2)
		srv.Publish("newHeads", []byte(n))
		srv.Publish(d.topics[2], []byte(`{"log":1}`))
		m := receive(t, heads)
		assert.JSONEq(t, n, string(m.Data))
		assert.True(t, m.Reconnected())
		assert.Equal(t, d.topics[2], receive(t, logs).Topic)
	}

	require.NoError(t, heads.Unsubscribe(ctx))
	require.NoError(t, srv.WaitSubscribers(ctx, "newHeads", 0), "eth_unsubscribe used the current id")
	require.NoError(t, logs.Unsubscribe(ctx))
	require.NoError(t, srv.WaitSubscribers(ctx, d.topics[2], 0))
	require.NoError(t, srv.WaitSubscribers(ctx, "newPendingTransactions", 0))
}

// restoreFrames is how many frames p's encoding of topics takes with
// chunk: what a restore of them sends.
func restoreFrames(t *testing.T, p protocol.Protocol, names []string, chunk int) int {
	t.Helper()
	return len(protocoltest.SubscribeBatch(t, p, names, chunk).Messages)
}
