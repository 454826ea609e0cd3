package client_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// TestManyGoroutinesCallSubscribeAndUnsubscribe runs 100 goroutines that
// each call, subscribe to a shared and an own topic, receive, and
// unsubscribe, all at once (run it under -race).
func TestManyGoroutinesCallSubscribeAndUnsubscribe(t *testing.T) {
	for _, d := range dialects[:3] {
		t.Run(d.name, func(t *testing.T) {
			srv := newServer(t, d.server)
			srv.Handle("echo", func(p json.RawMessage) (any, *protocol.Error) { return p, nil })
			// 100 subscribe requests at once: over Deribit's own limit,
			// which the client keeps by default (the test exchange does
			// not): this test is about concurrency, not pacing.
			c := dial(t, srv, d.proto(), client.WithRateLimit())
			ctx := testutil.Context(t)
			shared := d.topics[0]

			var wg sync.WaitGroup
			errs := make(chan error, 100)
			for g := range 100 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					var out []int
					if err := c.Call(ctx, "echo", []int{g}, &out); err != nil || len(out) != 1 || out[0] != g {
						errs <- fmt.Errorf("call %d: %v %v", g, out, err)
						return
					}
					own := fmt.Sprintf("ticker.G%d-PERPETUAL.raw", g)
					if d.name == "ethereum" {
						own = fmt.Sprintf(`["logs",{"address":"0x%x"}]`, g)
					}
					sub, err := c.Subscribe(ctx, []string{shared, own})
					if err != nil {
						errs <- err
						return
					}
					srv.Publish(own, []byte(`{"own":true}`))
					m := <-sub.C()
					if m.Topic != own {
						errs <- fmt.Errorf("goroutine %d got %q", g, m.Topic)
					}
					if err := sub.Unsubscribe(ctx); err != nil {
						errs <- err
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				require.NoError(t, err)
			}
			require.NoError(t, srv.WaitSubscribers(ctx, shared, 0), "the shared topic is released once everyone left")
		})
	}
}

// TestLoneAndConcurrentCallsMixed alternates calls made alone with calls
// made together (the writer's batches of one and of several): three
// callers, each 300 calls with pauses of random length, so every mix of
// the two happens; every call gets its own answer.
func TestLoneAndConcurrentCallsMixed(t *testing.T) {
	srv := newServer(t, dialects[0].server)
	srv.Handle("echo", func(p json.RawMessage) (any, *protocol.Error) { return p, nil })
	c := dial(t, srv, dialects[0].proto())
	ctx := testutil.Context(t)
	var wg sync.WaitGroup
	errs := make(chan error, 3)
	for g := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 7))
			for i := range 300 {
				var out []int
				if err := c.Call(ctx, "echo", []int{g, i}, &out); err != nil || len(out) != 2 || out[0] != g || out[1] != i {
					errs <- fmt.Errorf("caller %d call %d: %v %v", g, i, out, err)
					return
				}
				if rng.IntN(3) == 0 {
					time.Sleep(time.Duration(rng.IntN(200)) * time.Microsecond)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}
