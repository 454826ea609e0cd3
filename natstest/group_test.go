package natstest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/pkg/natsbridge"
)

// Three members of one group, each with its own NATS connection and
// each able to lead, subscribe to ten ticking topics: the exchange sees
// one connection and one subscription per topic at every moment, and
// every member gets every topic, in order.
func TestThreeMembersShareOneUpstream(t *testing.T) {
	ns := startNATS(t)
	ex := exchange(t)
	topics := startFeed(ex, 20*time.Millisecond)
	require.Len(t, topics, 10)
	s := sample(ex, topics)
	defer s.close()

	ctx := context.Background()
	var members []*natsbridge.Member
	var cols []*collector
	for i := range 3 {
		m := join(t, connect(t, ns.url()), "g1", fmt.Sprintf("m%d", i), ex)
		sub, err := m.Subscribe(ctx, topics...)
		require.NoError(t, err)
		members = append(members, m)
		cols = append(cols, collect(sub))
	}
	leader := leaderOf(t, members...)
	for _, c := range cols {
		c.waitEach(t, topics, nil, 20, 10*time.Second)
	}
	s.close()

	assert.LessOrEqual(t, s.maxConns.Load(), int64(1))
	assert.Equal(t, int64(1), int64(ex.Connections()))
	for _, topic := range topics {
		assert.Equal(t, 1, ex.Subscribers(topic), topic)
	}
	for i, c := range cols {
		perTopic := make(map[string]uint64)
		var last uint64
		for _, m := range c.snapshot() {
			assert.Equal(t, leader.Status().MemberID, source(m), "member %d: from the leader", i)
			assert.Greater(t, m.Seq, last, "member %d: Seq grows", i)
			last = m.Seq
			if perTopic[m.Topic] > 0 { // a book's first message is its snapshot (Thalex: snapshot:true)
				assert.Zero(t, m.Flags, "member %d: %s #%d flagged", i, m.Topic, m.Seq)
			}
			perTopic[m.Topic]++
		}
		assert.Len(t, perTopic, 10)
	}
}

// The leader follows the union of what members want: a topic one member
// drops stays while another wants it, and goes upstream a grace period
// after the last one dropped it.
func TestLeaderFollowsWantedTopics(t *testing.T) {
	ns := startNATS(t)
	ex := exchange(t)
	ctx := context.Background()
	grace := natsbridge.WithGrace(200 * time.Millisecond)
	a := join(t, connect(t, ns.url()), "g2", "a", ex, grace)
	leaderOf(t, a)
	b := join(t, connect(t, ns.url()), "g2", "b", nil, grace)

	subA, err := a.Subscribe(ctx, "ticker.X.raw", "ticker.Y.raw")
	require.NoError(t, err)
	subB, err := b.Subscribe(ctx, "ticker.Y.raw", "ticker.Z.raw")
	require.NoError(t, err)
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for _, topic := range []string{"ticker.X.raw", "ticker.Y.raw", "ticker.Z.raw"} {
		require.NoError(t, ex.WaitSubscribers(wctx, topic, 1))
	}

	require.NoError(t, subB.Unsubscribe(ctx))
	require.NoError(t, ex.WaitSubscribers(wctx, "ticker.Z.raw", 0))
	assert.Equal(t, 1, ex.Subscribers("ticker.Y.raw"), "a still wants Y")

	// A member that leaves withdraws what it wanted.
	require.NoError(t, b.Close())
	require.NoError(t, subA.Unsubscribe(ctx))
	require.NoError(t, ex.WaitSubscribers(wctx, "ticker.X.raw", 0))
	require.NoError(t, ex.WaitSubscribers(wctx, "ticker.Y.raw", 0))
	assert.Equal(t, 1, ex.Connections(), "the leader keeps its connection")
}
