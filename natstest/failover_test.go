package natstest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/natsbridge"
)

// group is three members of one group, each with its own NATS
// connection, subscribed to the same topics.
type group struct {
	members []*natsbridge.Member
	conns   []*nats.Conn
	cols    []*collector
}

func (g *group) add(t *testing.T, nc *nats.Conn, m *natsbridge.Member, topics []string) {
	t.Helper()
	sub, err := m.Subscribe(context.Background(), topics...)
	require.NoError(t, err)
	g.members = append(g.members, m)
	g.conns = append(g.conns, nc)
	g.cols = append(g.cols, collect(sub))
}

func (g *group) index(m *natsbridge.Member) int {
	for i, x := range g.members {
		if x == m {
			return i
		}
	}
	return -1
}

// checkTakeover checks one surviving consumer after a leader change at
// 'at' from old to new: per topic, no message of the old leader after
// one of the new, exactly one message flagged Reconnected (the leader
// change), Seq growing; it returns when the new leader's first message
// arrived and the longest silence of any topic around the change.
func checkTakeover(t *testing.T, name string, c *collector, topics []string, at time.Time, old, new string) (first time.Time, silence time.Duration) {
	t.Helper()
	byTopic := make(map[string][]client.Message)
	for _, m := range c.snapshot() {
		byTopic[m.Topic] = append(byTopic[m.Topic], m)
	}
	for _, topic := range topics {
		msgs := byTopic[topic]
		seenNew, reconnects := false, 0
		var prev client.Message
		for i, m := range msgs {
			switch source(m) {
			case new:
				if !seenNew && (first.IsZero() || m.RecvTime.Before(first)) {
					first = m.RecvTime
				}
				seenNew = true
			case old:
				assert.False(t, seenNew, "%s %s: a message of the old leader after the new one's", name, topic)
			default:
				t.Errorf("%s %s: message from %q", name, topic, source(m))
			}
			if m.Reconnected() {
				reconnects++
			}
			if i > 0 {
				assert.Greater(t, m.Seq, prev.Seq, "%s %s", name, topic)
				if m.RecvTime.After(at) {
					silence = max(silence, m.RecvTime.Sub(prev.RecvTime))
				}
			}
			prev = m
		}
		assert.True(t, seenNew, "%s %s: nothing from the new leader", name, topic)
		assert.Equal(t, 1, reconnects, "%s %s: the leader change is flagged once", name, topic)
	}
	return first, silence
}

// Kill the leader (its NATS connection and its upstream vanish, the lease
// is not released): a follower takes over within the lease TTL plus a
// poll, every surviving consumer sees the change once per topic and no
// message of the old leader after one of the new, and the exchange never
// sees two connections.
func TestLeaderKilledFollowerTakesOver(t *testing.T) {
	ns := startNATS(t)
	ex := exchange(t)
	topics := startFeed(ex, 20*time.Millisecond)
	s := sample(ex, topics)
	defer s.close()

	var g group
	for i := range 3 {
		nc := connect(t, ns.url())
		g.add(t, nc, join(t, nc, "g3", fmt.Sprintf("m%d", i), ex), topics)
	}
	leader := leaderOf(t, g.members...)
	li := g.index(leader)
	for _, c := range g.cols {
		c.waitEach(t, topics, nil, 10, 10*time.Second)
	}

	killed := time.Now()
	g.conns[li].Close() // the lease cannot be released
	require.NoError(t, leader.Close())
	var survivors []*natsbridge.Member
	var cols []*collector
	for i, m := range g.members {
		if i != li {
			survivors = append(survivors, m)
			cols = append(cols, g.cols[i])
		}
	}
	next := leaderOf(t, survivors...)
	base := cols[0].count()
	for _, c := range cols {
		c.waitEach(t, topics, base, 10, 10*time.Second)
	}
	s.close()

	assert.LessOrEqual(t, s.maxConns.Load(), int64(1), "the exchange saw two connections")
	assert.LessOrEqual(t, s.maxSubs.Load(), int64(1), "the exchange saw two subscriptions of a topic")
	for i, c := range cols {
		first, silence := checkTakeover(t, fmt.Sprintf("survivor %d", i), c, topics,
			killed, leader.Status().MemberID, next.Status().MemberID)
		t.Logf("survivor %d: first message of the new leader %v after the kill; longest silence of a topic %v",
			i, first.Sub(killed).Round(time.Millisecond), silence.Round(time.Millisecond))
		// The bound is the lease TTL (1s) plus a poll and the expiry
		// timer; generous here, for a loaded machine under -race.
		assert.Less(t, first.Sub(killed), 5*time.Second)
	}
}

// Cut the leader off from NATS (a proxy between them breaks): it drops
// its upstream before its lease can expire, so the exchange never sees
// two connections; when the proxy heals, what it published while cut
// off reaches the others late and is dropped as stale.
func TestLeaderCutOffDropsUpstream(t *testing.T) {
	ns := startNATS(t)
	ex := exchange(t)
	topics := startFeed(ex, 20*time.Millisecond)
	s := sample(ex, topics)
	defer s.close()
	p := newProxy(t, ns.addr())

	var g group
	// The leader's connection buffers while disconnected (nats.go's
	// default), so it publishes a backlog when the proxy heals.
	ncA := connect(t, p.url(), nats.ReconnectBufSize(nats.DefaultReconnectBufSize))
	a := join(t, ncA, "g4", "a", ex)
	leaderOf(t, a)
	g.add(t, ncA, a, topics)
	for _, id := range []string{"b", "c"} {
		nc := connect(t, ns.url())
		g.add(t, nc, join(t, nc, "g4", id, ex), topics)
	}
	for _, c := range g.cols {
		c.waitEach(t, topics, nil, 10, 10*time.Second)
	}

	cut := time.Now()
	p.Break()
	require.Eventually(t, func() bool { return !a.Status().Leader }, 10*time.Second, time.Millisecond)
	stepped := time.Now()
	next := leaderOf(t, g.members[1:]...)
	base := g.cols[1].count()
	for _, c := range g.cols[1:] {
		c.waitEach(t, topics, base, 10, 10*time.Second)
	}
	p.Heal()
	require.Eventually(t, func() bool { return ncA.IsConnected() }, 10*time.Second, 5*time.Millisecond)
	base = g.cols[1].count()
	for _, c := range g.cols[1:] {
		c.waitEach(t, topics, base, 10, 10*time.Second)
	}
	s.close()

	t.Logf("the cut-off leader stepped down %v after the cut (lease TTL %v)",
		stepped.Sub(cut).Round(time.Millisecond), a.Status().LeaseTTL)
	assert.LessOrEqual(t, s.maxConns.Load(), int64(1), "the exchange saw two connections")
	assert.LessOrEqual(t, s.maxSubs.Load(), int64(1), "the exchange saw two subscriptions of a topic")
	assert.False(t, a.Status().Leader)
	// What the cut-off leader published before its fence (TTL/2 after
	// its last renewal) reaches the others at the heal and is dropped as
	// stale; on a loaded machine the fence may pass before it published
	// anything, so the count is logged, and checkTakeover asserts that
	// nothing of it was delivered after the new leader's messages.
	for i, m := range g.members[1:] {
		checkTakeover(t, fmt.Sprintf("member %d", i+1), g.cols[i+1], topics, cut, "a", next.Status().MemberID)
		t.Logf("member %d dropped %d messages of the old leader as stale", i+1, m.Stats().Stale)
	}
	t.Logf("the cut-off leader held back %d messages past its fence", a.Stats().Fenced)
}

// Restart nats-server on the same port and store: the leader steps down
// while NATS is gone; afterwards one member leads again (the lease came
// back), it follows every topic again (the wanted topics came back), and
// every consumer's first message of each topic after the restart is
// flagged.
func TestNATSRestart(t *testing.T) {
	ns := startNATS(t)
	ex := exchange(t)
	topics := startFeed(ex, 20*time.Millisecond)
	s := sample(ex, topics)
	defer s.close()

	var g group
	for i := range 3 {
		nc := connect(t, ns.url())
		g.add(t, nc, join(t, nc, "g5", fmt.Sprintf("m%d", i), ex), topics)
	}
	leaderOf(t, g.members...)
	for _, c := range g.cols {
		c.waitEach(t, topics, nil, 10, 10*time.Second)
	}

	ns.stop()
	require.Eventually(t, func() bool {
		for _, m := range g.members {
			if m.Status().Leader {
				return false
			}
		}
		return true
	}, 10*time.Second, 5*time.Millisecond, "a leader kept leading without NATS")
	require.NoError(t, ex.WaitConnections(context.Background(), 0))
	restarted := time.Now()
	ns.start()

	leaderOf(t, g.members...)
	base := g.cols[0].count()
	for _, c := range g.cols {
		c.waitEach(t, topics, base, 10, 15*time.Second)
	}
	s.close()

	assert.LessOrEqual(t, s.maxConns.Load(), int64(1), "the exchange saw two connections")
	for _, topic := range topics {
		assert.Equal(t, 1, ex.Subscribers(topic), topic)
	}
	for i, c := range g.cols {
		firsts := make(map[string]client.Message)
		for _, m := range c.snapshot() {
			if _, ok := firsts[m.Topic]; !ok && m.RecvTime.After(restarted) {
				firsts[m.Topic] = m
			}
		}
		for _, topic := range topics {
			m, ok := firsts[topic]
			if assert.True(t, ok, "member %d %s: nothing after the restart", i, topic) {
				assert.NotZero(t, m.Flags, "member %d %s: the first message after the restart is not flagged", i, topic)
			}
		}
	}
}
