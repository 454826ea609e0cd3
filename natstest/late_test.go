package natstest

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/natsbridge"
)

// Live messages that reach a member later than the bound after the
// leader read them (a NATS link that stalled for less than its ping
// notice, then delivered what it held back) are flagged stale: the first
// of each run of late ones, so a program learns that what follows is
// old without a flag on every message. A message on time ends the run.
// The messages are published by hand on the live subject, with the
// leader's epoch and sequences past its own, as a stalled link delivers
// them.
func TestLateMessagesAreFlaggedStale(t *testing.T) {
	ns := startNATS(t)
	ex := exchange(t)
	const topic = "ticker.LATE.raw"
	a := join(t, connect(t, ns.url()), "g52", "a", ex)
	leaderOf(t, a)
	b := join(t, connect(t, ns.url()), "g52", "b", nil, natsbridge.WithLateAfter(500*time.Millisecond))
	ctx := context.Background()
	sub, err := b.Subscribe(ctx, topic)
	require.NoError(t, err)
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	require.NoError(t, ex.WaitSubscribers(wctx, topic, 1))
	ex.Publish(topic, []byte(`{"i":0}`)) // the leader's own, seq 1: b's position
	m, err := next(sub, 10*time.Second)
	require.NoError(t, err)
	require.False(t, m.Stale())

	raw := connect(t, ns.url())
	enc, _ := natsbridge.EncodeTopic(topic)
	epoch := strconv.FormatUint(a.Status().Epoch, 10)
	now := time.Now()
	ages := []time.Duration{2 * time.Second, time.Second, 0, 3 * time.Second, 0}
	for i, age := range ages {
		h := nats.Header{
			natsbridge.HeaderEpoch:  []string{epoch},
			natsbridge.HeaderSeq:    []string{strconv.Itoa(i + 2)},
			natsbridge.HeaderRecvNs: []string{strconv.FormatInt(now.Add(-age).UnixNano(), 10)},
		}
		require.NoError(t, raw.PublishMsg(&nats.Msg{Subject: "wsfan.g52.t." + enc, Header: h, Data: []byte(`{}`)}))
	}
	require.NoError(t, raw.Flush())
	var flags []client.Flags
	for _, age := range ages {
		m, err := next(sub, 10*time.Second)
		require.NoError(t, err)
		flags = append(flags, m.Flags&client.FlagStale)
		assert.Equal(t, now.Add(-age).UnixNano(), m.UpstreamRecvTime.UnixNano())
	}
	assert.Equal(t, []client.Flags{client.FlagStale, 0, 0, client.FlagStale, 0}, flags)
}
