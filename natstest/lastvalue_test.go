package natstest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/natsbridge"
)

// A member joining a quiet topic gets its last value at once, then the
// next live message, and nothing twice.
func TestLastValueOfQuietTopic(t *testing.T) {
	ns := startNATS(t)
	ex := exchange(t)
	ctx := context.Background()
	const topic = "ticker.QUIET.raw"
	a := join(t, connect(t, ns.url()), "g6", "a", ex)
	leaderOf(t, a)
	subA, err := a.Subscribe(ctx, topic)
	require.NoError(t, err)
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	require.NoError(t, ex.WaitSubscribers(wctx, topic, 1))
	ex.Publish(topic, []byte(`{"v":1}`))
	m, err := next(subA, 10*time.Second)
	require.NoError(t, err)
	require.Equal(t, `a|{"v":1}`, string(m.Data))
	require.Eventually(t, func() bool { return a.Stats().LastValues >= 1 }, 10*time.Second, time.Millisecond)

	b := join(t, connect(t, ns.url()), "g6", "b", nil)
	start := time.Now()
	subB, err := b.Subscribe(ctx, topic)
	require.NoError(t, err)
	m, err = next(subB, 5*time.Second)
	require.NoError(t, err, "no last value")
	t.Logf("last value delivered %v after Subscribe was called", m.RecvTime.Sub(start).Round(time.Microsecond))
	assert.Equal(t, `a|{"v":1}`, string(m.Data))
	assert.Equal(t, client.Message{Topic: topic, Data: m.Data, Seq: 1, RecvTime: m.RecvTime}, m)

	ex.Publish(topic, []byte(`{"v":2}`))
	m, err = next(subB, 10*time.Second)
	require.NoError(t, err)
	assert.Equal(t, `a|{"v":2}`, string(m.Data))
	assert.Equal(t, uint64(2), m.Seq)
	assert.Zero(t, m.Flags)
	_, err = next(subB, 100*time.Millisecond)
	assert.ErrorIs(t, err, errNoMessage, "a message twice")
}

// Members joining a busy topic at random moments see its messages in
// order with no duplicate: after the first live message, Seq moves
// exactly as far as the publisher's counter, and only a move of more
// than one is flagged as a gap. (A
// starved leader may lose its lease: the new term's first message is
// flagged Reconnected and starts the count again.)
func TestJoinMidStreamNoDuplicateNoReorder(t *testing.T) {
	ns := startNATS(t)
	ex := exchange(t)
	ctx := context.Background()
	const topic = "ticker.BUSY.raw"
	a := join(t, connect(t, ns.url()), "g7", "a", ex)
	leaderOf(t, a)
	subA, err := a.Subscribe(ctx, topic)
	require.NoError(t, err)
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	require.NoError(t, ex.WaitSubscribers(wctx, topic, 1))

	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for n := 1; ; n++ {
			select {
			case <-stop:
				return
			default:
			}
			ex.Publish(topic, fmt.Appendf(nil, `{"n":%d}`, n))
			if n%10 == 0 {
				time.Sleep(time.Millisecond)
			}
		}
	}()
	defer func() {
		close(stop)
		wg.Wait()
	}()

	cols := []*collector{collect(subA)}
	var members []*natsbridge.Member
	for i := range 5 {
		time.Sleep(20 * time.Millisecond) // join at different points of the stream
		m := join(t, connect(t, ns.url()), "g7", fmt.Sprintf("c%d", i), nil)
		sub, err := m.Subscribe(ctx, topic)
		require.NoError(t, err)
		cols = append(cols, collect(sub))
		members = append(members, m)
	}
	for _, c := range cols {
		c.waitEach(t, []string{topic}, nil, 300, 20*time.Second)
	}
	for i, c := range cols {
		var prev client.Message
		var prevN int
		for j, m := range c.snapshot() {
			var v struct{ N int }
			_, payload, _ := bytes.Cut(m.Data, []byte("|"))
			require.NoError(t, json.Unmarshal(payload, &v))
			switch {
			case j == 0 || m.Reconnected():
			case j == 1 && i > 0:
				// Late joiners start from the cached value, which may lag
				// the live subject: what lies between went out before
				// they subscribed, so the first live message follows it.
				require.Greater(t, v.N, prevN, "consumer %d: reordered or repeated", i)
				assert.Equal(t, uint64(1), m.Seq-prev.Seq, "consumer %d: first live message after the cached one", i)
				assert.False(t, m.Gap(), "consumer %d: joining is not a gap (n=%d after %d)", i, v.N, prevN)
			default:
				require.Greater(t, v.N, prevN, "consumer %d: reordered or repeated", i)
				assert.Equal(t, uint64(v.N-prevN), m.Seq-prev.Seq, "consumer %d: Seq does not follow the stream at n=%d", i, v.N)
				assert.Equal(t, v.N-prevN > 1, m.Gap(), "consumer %d: gap flag at n=%d after %d", i, v.N, prevN)
			}
			prev, prevN = m, v.N
		}
	}
	for i, m := range members {
		st := m.Stats()
		t.Logf("consumer %d: delivered %d, duplicates dropped %d, dropped %d", i+1, st.Delivered, st.Duplicates, st.Dropped)
	}
}
