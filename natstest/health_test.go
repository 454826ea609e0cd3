package natstest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/faultproxy"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/natsbridge"
	"github.com/wsfan/wsfan/pkg/sidecar"
)

// quickSilence judges a member's topics silent after 300ms (the
// default floor is 5s).
func quickSilence(cfg *sidecar.Config) {
	cfg.NATSOptions = append(cfg.NATSOptions, natsbridge.WithSilentAfter(10, 300*time.Millisecond))
}

// subscribeAll connects a program to car and subscribes it to topics,
// waiting for three messages of each.
func subscribeAll(t *testing.T, car *sidecarRig, topics []string) *client.Subscription {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	sub, err := car.local(t).Subscribe(ctx, topics)
	require.NoError(t, err)
	require.NoError(t, eachTopic(ctx, sub, topics, 20))
	return sub
}

// When the group's feed goes silent while every link answers its pings
// (the exchange stops publishing), every member says so: /readyz 503 on
// the leader and on the member alike once their programs have had
// nothing beyond the limit, and 200 again when data flows.
func TestMembersNotReadyWhileSilent(t *testing.T) {
	ns := startNATS(t)
	ex := exchange(t)
	topics := startFeed(ex, 20*time.Millisecond)
	cars := []*sidecarRig{
		startSidecar(t, ns.url(), "silent", ex, "car0", quickSilence),
		startSidecar(t, ns.url(), "silent", ex, "car1", quickSilence),
	}
	for _, car := range cars {
		subscribeAll(t, car, topics)
		require.Eventually(t, func() bool { return car.ready(t) }, 10*time.Second, 10*time.Millisecond)
	}

	ex.StopFeed()
	for i, car := range cars {
		require.Eventually(t, func() bool {
			ok, body := car.readyz(t)
			return !ok && strings.Contains(body, "silent")
		}, 10*time.Second, 10*time.Millisecond, "sidecar %d: /readyz 503 while its topics are silent", i)
		assert.Equal(t, "connected", cars[i].srv.Status().Upstream.State, "sidecar %d: the leader's upstream is up", i)
	}
	startFeed(ex, 20*time.Millisecond)
	for i, car := range cars {
		require.Eventually(t, func() bool { return car.ready(t) }, 10*time.Second, 10*time.Millisecond,
			"sidecar %d: ready again once data flows", i)
	}
}

// A member whose NATS link stays open but stalls (a black hole: every
// byte dropped, the TCP connection left open) notices within about 5s with the default pings
// (-nats-ping 1s, -nats-max-pings-out 3): its NATS state and /readyz
// say so, and it serves again once the link heals.
func TestMemberNoticesAStalledNATSLink(t *testing.T) {
	ns := startNATS(t)
	ex := exchange(t)
	topics := startFeed(ex, 20*time.Millisecond)
	leader := startSidecar(t, ns.url(), "stall", ex, "leader")
	require.Eventually(t, func() bool { return leader.ready(t) }, 10*time.Second, 10*time.Millisecond)
	p := faultproxy.Start(t, ns.addr())
	member := startSidecar(t, "nats://"+p.Addr(), "stall", ex, "member")
	require.Eventually(t, func() bool {
		g := member.srv.Status().Upstream.Group
		return g != nil && g.LeaderMember != "" && !g.Leader
	}, 10*time.Second, 10*time.Millisecond, "the member joins and hears the leader")
	sub := subscribeAll(t, member, topics)
	require.True(t, member.ready(t))

	stalled := time.Now()
	p.Blackhole()
	require.Eventually(t, func() bool {
		return member.srv.Status().Upstream.Group.NATS != "connected"
	}, 10*time.Second, 10*time.Millisecond, "the stalled NATS link is noticed")
	noticed := time.Since(stalled)
	ok, body := member.readyz(t)
	assert.False(t, ok, "/readyz while the NATS link is dead: %s", body)
	t.Logf("a stalled NATS link noticed after %v", noticed.Round(time.Millisecond))

	p.Heal()
	require.Eventually(t, func() bool { return member.ready(t) }, 20*time.Second, 10*time.Millisecond,
		"ready again after the heal")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, eachTopic(ctx, sub, topics, 3))
}
