package natstest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/wsfan/wsfan/internal/sidecartest"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/sidecar"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// sidecarRig is a sidecar serving on a loopback port as a member of a
// NATS group.
type sidecarRig struct {
	srv  *sidecar.Server
	addr string
	stop func() // stops serving and waits; safe to call twice
}

// startSidecar starts a sidecar in group on NATS at natsURL, whose
// upstream, when it leads, is ex; each of change adjusts its Config.
func startSidecar(t *testing.T, natsURL, group string, ex *exchangetest.Server, name string, change ...func(*sidecar.Config)) *sidecarRig {
	t.Helper()
	cfg := sidecar.Config{
		Upstream:       ex.URL(),
		Protocol:       "thalex",
		NATS:           natsURL,
		NATSGroup:      group,
		NATSLeaseTTL:   time.Second,
		Grace:          200 * time.Millisecond,
		RequestTimeout: 10 * time.Second,
		DrainTimeout:   time.Second,
		Logger:         zaptest.NewLogger(t, zaptest.Level(zap.InfoLevel)).With(zap.String("sidecar", name)),
	}
	for _, f := range change {
		f(&cfg)
	}
	served := sidecartest.Serve(t, cfg)
	return &sidecarRig{srv: served.Server, addr: served.Addr, stop: served.Stop}
}

// ready reports what /readyz says.
func (r *sidecarRig) ready(t *testing.T) bool {
	ok, _ := r.readyz(t)
	return ok
}

// readyz reports whether /readyz answers 200, and its body.
func (r *sidecarRig) readyz(t *testing.T) (bool, string) {
	t.Helper()
	resp, err := http.Get("http://" + r.addr + "/readyz")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	return resp.StatusCode == http.StatusOK, string(body)
}

// local connects a program to the sidecar with the SDK, as a program
// written for the exchange would connect to the exchange.
func (r *sidecarRig) local(t *testing.T) *client.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, "ws://"+r.addr+"/ws", client.WithProtocol(thalex.Protocol()))
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// resumes returns how many times each topic's stream resumed after an
// upstream change, by topic.
func (r *sidecarRig) resumes() map[string]uint64 {
	out := make(map[string]uint64)
	for _, ts := range r.srv.Status().Topics {
		out[ts.Topic] = ts.Resumes
	}
	return out
}

// Three sidecars in one NATS group share one exchange connection: at
// every moment the exchange sees at most one connection and one
// subscription per topic, and every sidecar's local program gets every
// topic. When the leading sidecar goes, another takes the upstream over;
// the others' local programs keep their connections and their streams
// resume, each topic marked resumed once.
func TestSidecarsShareOneUpstream(t *testing.T) {
	ns := startNATS(t)
	ex := exchange(t)
	topics := startFeed(ex, 20*time.Millisecond)
	s := sample(ex, topics)
	defer s.close()

	var cars []*sidecarRig
	for i := range 3 {
		cars = append(cars, startSidecar(t, ns.url(), "scars", ex, fmt.Sprintf("car%d", i)))
	}
	for _, car := range cars {
		require.Eventually(t, func() bool { return car.ready(t) }, 10*time.Second, 10*time.Millisecond, "/readyz once joined")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var subs []*client.Subscription
	for _, car := range cars {
		sub, err := car.local(t).Subscribe(ctx, topics)
		require.NoError(t, err)
		subs = append(subs, sub)
	}
	for i, sub := range subs {
		require.NoError(t, eachTopic(ctx, sub, topics, 3), "sidecar %d's program", i)
	}
	leader := -1
	for i, car := range cars {
		if g := car.srv.Status().Upstream.Group; g != nil && g.Leader {
			require.Equal(t, -1, leader, "two leaders")
			leader = i
		}
	}
	require.NotEqual(t, -1, leader, "no leader")
	assert.Equal(t, 1, ex.Connections())
	for _, topic := range topics {
		assert.Equal(t, 1, ex.Subscribers(topic), topic)
	}

	cars[leader].stop()
	var rest []int
	for i := range cars {
		if i != leader {
			rest = append(rest, i)
		}
	}
	for _, i := range rest {
		require.NoError(t, eachTopic(ctx, subs[i], topics, 3), "sidecar %d's program after the takeover", i)
		car := cars[i]
		require.Eventually(t, func() bool {
			for _, topic := range topics {
				if car.resumes()[topic] == 0 {
					return false
				}
			}
			return true
		}, 10*time.Second, 10*time.Millisecond, "sidecar %d: every topic resumed", i)
	}
	s.close()
	assert.LessOrEqual(t, s.maxConns.Load(), int64(1), "the exchange never saw two connections")
	assert.LessOrEqual(t, s.maxSubs.Load(), int64(1), "nor a topic subscribed twice")
	for _, i := range rest {
		for topic, n := range cars[i].resumes() {
			assert.Equal(t, uint64(1), n, "sidecar %d: %s resumed once", i, topic)
		}
	}
}

// A sidecar started before NATS is not ready, says why (the connection
// refused, not a publish's "outbound buffer limit exceeded"), and serves
// once NATS is up and the group joined.
func TestSidecarWaitsForNATS(t *testing.T) {
	ns := startNATS(t)
	ns.stop()
	ex := exchange(t)
	car := startSidecar(t, ns.url(), "late", ex, "late")
	assert.False(t, car.ready(t), "not ready without NATS")
	require.Eventually(t, func() bool {
		return strings.Contains(car.srv.Status().Upstream.LastError, "connection refused")
	}, 10*time.Second, 20*time.Millisecond, "the status names the cause: %q", car.srv.Status().Upstream.LastError)
	assert.Contains(t, car.srv.Status().Upstream.LastError, "NATS unreachable")
	ns.start()
	require.Eventually(t, func() bool { return car.ready(t) }, 20*time.Second, 20*time.Millisecond, "ready once NATS is up")

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	sub, err := car.local(t).Subscribe(ctx, []string{"ticker.BTC-PERPETUAL.raw"})
	require.NoError(t, err)
	require.NoError(t, ex.WaitSubscribers(ctx, "ticker.BTC-PERPETUAL.raw", 1))
	ex.Publish("ticker.BTC-PERPETUAL.raw", []byte(`{"p":1}`))
	select {
	case m := <-sub.C():
		assert.JSONEq(t, `{"p":1}`, string(m.Data))
	case <-ctx.Done():
		t.Fatal("no message through the group")
	}
}

// eachTopic waits until sub has delivered n messages of every topic.
func eachTopic(ctx context.Context, sub *client.Subscription, topics []string, n int) error {
	got := make(map[string]int)
	left := len(topics)
	for left > 0 {
		select {
		case m, ok := <-sub.C():
			if !ok {
				return errors.New("subscription ended")
			}
			got[m.Topic]++
			if got[m.Topic] == n {
				left--
			}
		case <-ctx.Done():
			return fmt.Errorf("%d of %d topics reached %d messages: %v", len(topics)-left, len(topics), n, got)
		}
	}
	return nil
}

// A group's leader holds its upstream with a hot standby when the
// sidecars are given one (-hot-standby): two connections to the
// exchange, each topic subscribed on both, and the local program gets
// every topic once.
func TestGroupLeaderHoldsAHotStandby(t *testing.T) {
	ns := startNATS(t)
	ex := exchange(t)
	topics := startFeed(ex, 20*time.Millisecond)
	cfg := sidecar.Config{Upstream: ex.URL(), Protocol: "thalex", NATS: ns.url(), NATSGroup: "standby",
		NATSLeaseTTL: time.Second, HotStandby: 1, RequestTimeout: 10 * time.Second, DrainTimeout: time.Second,
		Logger: zaptest.NewLogger(t, zaptest.Level(zap.InfoLevel))}
	served := sidecartest.Serve(t, cfg)
	car := &sidecarRig{srv: served.Server, addr: served.Addr, stop: served.Stop}
	require.Eventually(t, func() bool { return car.ready(t) }, 10*time.Second, 10*time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	sub, err := car.local(t).Subscribe(ctx, topics)
	require.NoError(t, err)
	require.NoError(t, eachTopic(ctx, sub, topics, 3))
	assert.Equal(t, 2, ex.Connections(), "the leader's two legs")
	for _, topic := range topics {
		assert.Equal(t, 2, ex.Subscribers(topic), "%s on both legs", topic)
	}
}

// A member's /v1/status names the member that leads the group, the
// leader's its own; when the leader goes, the one that takes over names
// itself.
func TestStatusNamesTheLeader(t *testing.T) {
	ns := startNATS(t)
	ex := exchange(t)
	cars := []*sidecarRig{startSidecar(t, ns.url(), "named", ex, "car0"), startSidecar(t, ns.url(), "named", ex, "car1")}
	group := func(car *sidecarRig) sidecar.GroupStatus {
		resp, err := http.Get("http://" + car.addr + "/v1/status")
		require.NoError(t, err)
		defer resp.Body.Close()
		var st sidecar.Status
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&st))
		require.NotNil(t, st.Upstream.Group)
		return *st.Upstream.Group
	}
	leader := -1
	require.Eventually(t, func() bool {
		for i, car := range cars {
			if group(car).Leader {
				leader = i
			}
		}
		return leader >= 0
	}, 10*time.Second, 10*time.Millisecond, "a leader")
	name := group(cars[leader]).Member
	require.NotEmpty(t, name)
	require.Eventually(t, func() bool {
		for _, car := range cars {
			if group(car).LeaderMember != name {
				return false
			}
		}
		return true
	}, 10*time.Second, 10*time.Millisecond, "every member names %s", name)

	cars[leader].stop()
	other := cars[1-leader]
	require.Eventually(t, func() bool {
		g := group(other)
		return g.Leader && g.LeaderMember == g.Member
	}, 10*time.Second, 10*time.Millisecond, "the member that took over names itself")
}
