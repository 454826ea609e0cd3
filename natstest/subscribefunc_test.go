package natstest

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/natsbridge"
)

// A SubscribeFunc handler gets what a channel subscription would: the
// last value first, then the live messages of every topic, Seq growing
// by one, calls never overlapping; it may unsubscribe from inside, and
// then no call follows and C is closed.
func TestSubscribeFuncDeliversLikeAChannel(t *testing.T) {
	ns := startNATS(t)
	ex := exchange(t)
	ctx := context.Background()
	topics := []string{"ticker.FA.raw", "ticker.FB.raw"}
	a := join(t, connect(t, ns.url()), "g-func", "a", ex)
	leaderOf(t, a)
	warm, err := a.Subscribe(ctx, topics[0])
	require.NoError(t, err)
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	require.NoError(t, ex.WaitSubscribers(wctx, topics[0], 1))
	ex.Publish(topics[0], []byte(`{"v":0}`))
	_, err = next(warm, 10*time.Second)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return a.Stats().LastValues >= 1 }, 10*time.Second, time.Millisecond)

	b := join(t, connect(t, ns.url()), "g-func", "b", nil)
	var (
		mu      sync.Mutex
		got     []client.Message
		inside  atomic.Int32
		overlap atomic.Bool
		after   atomic.Int32 // calls after the handler unsubscribed
		quit    atomic.Bool
		self    atomic.Pointer[natsbridge.Subscription]
	)
	const stopAt = 41
	sub, err := b.SubscribeFunc(ctx, func(m client.Message) {
		if inside.Add(1) > 1 {
			overlap.Store(true)
		}
		defer inside.Add(-1)
		if quit.Load() {
			after.Add(1)
			return
		}
		mu.Lock()
		got = append(got, m)
		n := len(got)
		mu.Unlock()
		if n == stopAt {
			quit.Store(true)
			assert.NoError(t, self.Load().Unsubscribe(ctx)) // set long before: the 41st message is live
		}
	}, topics...)
	require.NoError(t, err)
	self.Store(sub)
	mu.Lock()
	require.NotEmpty(t, got, "the last value is handed over before SubscribeFunc returns")
	assert.Equal(t, `a|{"v":0}`, string(got[0].Data))
	mu.Unlock()

	require.NoError(t, ex.WaitSubscribers(wctx, topics[1], 1))
	for i := 1; !quit.Load() && i <= 200; i++ {
		for _, topic := range topics {
			ex.Publish(topic, []byte(fmt.Sprintf(`{"v":%d}`, i)))
		}
		time.Sleep(time.Millisecond)
	}
	select {
	case _, ok := <-sub.C():
		assert.False(t, ok, "C carries nothing")
	case <-time.After(10 * time.Second):
		t.Fatal("C not closed after Unsubscribe")
	}
	for i := 0; i < 20; i++ { // what was published after the end reaches nobody
		ex.Publish(topics[1], []byte(`{"late":true}`))
	}
	time.Sleep(100 * time.Millisecond)

	mu.Lock()
	defer mu.Unlock()
	require.Len(t, got, stopAt)
	for i, m := range got {
		assert.Equal(t, uint64(i+1), m.Seq, "message %d", i)
		assert.Contains(t, topics, m.Topic)
	}
	assert.False(t, overlap.Load(), "calls overlapped")
	assert.Zero(t, after.Load(), "calls after Unsubscribe")
	_, open := <-sub.Err()
	assert.False(t, open, "a clean end yields no error")
}
