//go:build frozen

package natstest

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/natsbridge"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// The frozen-leader measurement (make nats-frozen; build tag frozen,
// outside make test: it takes about 15 s and its bound is a timing).
//
// The leader runs in a child process, this test binary run again with
// frozenChild set, so that it can be stopped (SIGSTOP) as a paused VM
// or a stopped process is: its connection to the exchange stays open
// and nothing of it runs.

// Environment of the child leader.
const (
	frozenChild    = "WSFAN_NATSTEST_FROZEN_CHILD" // the group; set only in the child
	frozenNATS     = "WSFAN_NATSTEST_FROZEN_NATS"
	frozenExchange = "WSFAN_NATSTEST_FROZEN_EXCHANGE"
)

// init runs the child leader in place of the tests when frozenChild is
// set: it joins the group as a candidate dialling the exchange and runs
// until its stdin closes (the parent ended, or killed it).
func init() {
	group := os.Getenv(frozenChild)
	if group == "" {
		return
	}
	nc, err := nats.Connect(os.Getenv(frozenNATS), nats.MaxReconnects(-1), nats.ReconnectBufSize(-1))
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	_, err = natsbridge.Join(ctx, nc, group,
		natsbridge.WithMemberID("child"),
		natsbridge.WithLeaseTTL(time.Second),
		natsbridge.WithProtocol(thalex.Protocol()),
		natsbridge.WithUpstream(natsbridge.DialClient(os.Getenv(frozenExchange),
			client.WithProtocol(thalex.Protocol()), client.WithBackoff(fastBackoff))))
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		os.Exit(2)
	}
	_, _ = io.Copy(io.Discard, os.Stdin)
	os.Exit(0)
}

// A leader frozen for 5 s (SIGSTOP, then SIGCONT): its successor takes
// the lease once it expires and subscribes on a connection of its own,
// while the frozen leader's connection stays open (nothing of it used:
// the fence) until the leader runs again and closes it at once. The
// exchange's subscribed connections are counted every 5 ms: the overlap
// is at most the freeze minus 3/4 of the lease TTL (the lease was renewed
// at most TTL/4 before the freeze, and lives a TTL), plus the close
// after the resume.
func TestFrozenLeaderOverlap(t *testing.T) {
	const (
		ttl    = time.Second
		freeze = 5 * time.Second
		group  = "gfrozen"
	)
	ns := startNATS(t)
	ex := exchange(t)
	topics := startFeed(ex, 20*time.Millisecond)

	self, err := os.Executable()
	require.NoError(t, err)
	child := exec.Command(self, "-test.run=^$")
	child.Env = append(os.Environ(), frozenChild+"="+group, frozenNATS+"="+ns.url(), frozenExchange+"="+ex.URL())
	stdin, err := child.StdinPipe()
	require.NoError(t, err)
	child.Stderr = os.Stderr
	require.NoError(t, child.Start())
	t.Cleanup(func() {
		_ = child.Process.Signal(syscall.SIGCONT)
		_ = stdin.Close()
		_ = child.Process.Kill()
		_ = child.Wait()
	})
	require.Eventually(t, func() bool { return ex.Connections() == 1 }, 15*time.Second, 10*time.Millisecond, "the child leads")

	b := join(t, connect(t, ns.url()), group, "b", ex, natsbridge.WithLeaseTTL(ttl))
	sub, err := b.Subscribe(context.Background(), topics...)
	require.NoError(t, err)
	subscribed := func() int { // the exchange's connections subscribed to the feed
		n := 0
		for _, topic := range topics {
			n = max(n, ex.Subscribers(topic))
		}
		return n
	}
	require.Eventually(t, func() bool { return subscribed() == 1 }, 15*time.Second, 10*time.Millisecond)
	_, err = next(sub, 10*time.Second)
	require.NoError(t, err)
	require.False(t, b.Status().Leader, "the child leads")

	// Freeze, count every 5 ms, resume, count until one is left.
	var overlap, maxOpen time.Duration
	var firstTwo, lastTwo time.Time
	start := time.Now()
	require.NoError(t, child.Process.Signal(syscall.SIGSTOP))
	resumed := time.Time{}
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	prev := start
	for now := range tick.C {
		if resumed.IsZero() && now.Sub(start) >= freeze {
			require.NoError(t, child.Process.Signal(syscall.SIGCONT))
			resumed = now
		}
		if n := subscribed(); n >= 2 {
			overlap += now.Sub(prev)
			if firstTwo.IsZero() {
				firstTwo = now
			}
			lastTwo = now
		}
		prev = now
		if !resumed.IsZero() && (now.Sub(resumed) > 3*time.Second || subscribed() == 1 && ex.Connections() == 1 && now.Sub(resumed) > time.Second) {
			break
		}
	}
	if !firstTwo.IsZero() {
		maxOpen = lastTwo.Sub(firstTwo)
	}
	require.Eventually(t, func() bool { return b.Status().Leader }, 10*time.Second, 10*time.Millisecond, "b took over")
	t.Logf("freeze %v, lease TTL %v: two subscribed connections from +%v to +%v (%v counted); closed %v after the resume",
		freeze, ttl, firstTwo.Sub(start).Round(time.Millisecond), lastTwo.Sub(start).Round(time.Millisecond),
		overlap.Round(time.Millisecond), lastTwo.Sub(resumed).Round(time.Millisecond))
	assert.Equal(t, 1, ex.Connections(), "the resumed leader closed its connection")
	assert.LessOrEqual(t, maxOpen, freeze-3*ttl/4+500*time.Millisecond, "overlap beyond the bound")
}
