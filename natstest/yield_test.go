package natstest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/wsfan/wsfan/internal/faultproxy"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/natsbridge"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// pathPing is the upstream liveness of the members in the path tests: a
// dead path is noticed within about 300ms.
var pathPing = []client.Option{client.WithPing(100*time.Millisecond, 300*time.Millisecond),
	client.WithDialTimeout(500 * time.Millisecond)}

// joinVia makes a candidate of group whose path to ex runs through its
// own fault proxy, tagged with its id as join's.
func joinVia(t *testing.T, ncURL, group, id string, ex *exchangetest.Server, opts ...natsbridge.Option) (*natsbridge.Member, *faultproxy.Proxy) {
	t.Helper()
	p := faultproxy.Start(t, ex.Addr())
	nc := connect(t, ncURL)
	dial := natsbridge.DialClient(p.URL(ex.URL()), append([]client.Option{client.WithProtocol(thalex.Protocol()),
		client.WithBackoff(fastBackoff), client.WithLogger(zaptest.NewLogger(t).With(zap.String("up", id)))}, pathPing...)...)
	m := join(t, nc, group, id, nil, append([]natsbridge.Option{natsbridge.WithUpstream(tagged(id, dial))}, opts...)...)
	return m, p
}

// A leader whose own path to the exchange is black-holed (its NATS link
// fine) notices it through its upstream's pings, gives the lease up, and
// a member whose path works takes over: every consumer gets data again
// within the notice, the yield limit and a lease poll, not after the
// path heals. The old leader does not lead again while its path is dead
// (it says so in Status.PathDown), and campaigns again once a probe of
// its path connects after the heal.
func TestLeaderWithDeadUpstreamYields(t *testing.T) {
	ns := startNATS(t)
	ex := exchange(t)
	topics := startFeed(ex, 20*time.Millisecond)

	var g group
	var paths []*faultproxy.Proxy
	for i := range 3 {
		m, p := joinVia(t, ns.url(), "yield", fmt.Sprintf("m%d", i), ex)
		g.add(t, nil, m, topics)
		paths = append(paths, p)
	}
	leader := leaderOf(t, g.members...)
	li := g.index(leader)
	for _, c := range g.cols {
		c.waitEach(t, topics, nil, 10, 10*time.Second)
	}

	cut := time.Now()
	paths[li].Blackhole()
	require.Eventually(t, func() bool { return leader.Status().PathDown }, 10*time.Second, 5*time.Millisecond,
		"the leader yields its dead path")
	yielded := time.Now()
	next := leaderOf(t, g.members...)
	require.NotSame(t, leader, next, "the member with the dead path leads again")
	base := g.cols[0].count()
	for _, c := range g.cols {
		c.waitEach(t, topics, base, 10, 10*time.Second)
	}
	back := time.Now()
	for i, c := range g.cols {
		checkTakeover(t, fmt.Sprintf("member %d", i), c, topics, cut, leader.Status().MemberID, next.Status().MemberID)
	}
	t.Logf("black hole on the leader's path: yielded after %v, every consumer had data again after %v (lease TTL %v)",
		yielded.Sub(cut).Round(time.Millisecond), back.Sub(cut).Round(time.Millisecond), leader.Status().LeaseTTL)
	assert.False(t, leader.Status().Leader)

	paths[li].Heal()
	require.Eventually(t, func() bool { return !leader.Status().PathDown }, 20*time.Second, 10*time.Millisecond,
		"a probe of the healed path clears PathDown")
	assert.Same(t, next, leaderOf(t, g.members...), "the leader with a working path keeps the lease")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, ex.WaitConnections(ctx, 1), "the probe closes its connection")
}
