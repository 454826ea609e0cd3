package sidecar_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/deribit"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/sidecar"
)

const (
	tickBTC = "ticker.BTC-PERPETUAL.100ms"
	tickETH = "ticker.ETH-PERPETUAL.100ms"
)

// teeTicker publishes on every server the same chained ticker of topic
// every interval until the test ends: each message names its number
// (change_id, also Deribit's identity of it) and the one before
// (prev_change_id), so a client's chain shows a lost message as a break
// whichever server it came from.
func teeTicker(t *testing.T, topic string, interval time.Duration, servers ...*exchangetest.Server) {
	stop, done := make(chan struct{}), make(chan struct{})
	t.Cleanup(func() { close(stop); <-done })
	go func() {
		defer close(done)
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for n := 1; n < 1_000_000; n++ {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			payload := fmt.Appendf(nil, `{"timestamp":%d,"change_id":%d,"prev_change_id":%d,"instrument_name":"BTC-PERPETUAL"}`, n, n, n-1)
			for _, s := range servers {
				s.Publish(topic, payload)
			}
		}
	}()
}

// followers connects nWS WebSocket and nSS SSE clients following topic,
// each with its chain, closed with the test; it returns the WebSocket
// connections and the chains (the WebSocket clients' first).
func followers(t *testing.T, r *rig, topic string, nWS, nSS int) ([]*websocket.Conn, []*chain) {
	t.Helper()
	chains := make([]*chain, nWS+nSS)
	var readers sync.WaitGroup
	var conns []*websocket.Conn
	var bodies []*http.Response
	t.Cleanup(func() {
		for _, ws := range conns {
			_ = ws.Close()
		}
		for _, b := range bodies {
			_ = b.Body.Close()
		}
		readers.Wait()
	})
	for i := range nWS {
		ws := r.dial(t)
		conns = append(conns, ws)
		testutil.Send(t, ws, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"public/subscribe","params":{"channels":[%q]}}`, i+1, topic))
		assert.Contains(t, testutil.Recv(t, ws), topic) // the acknowledgement
		chains[i] = &chain{topic: topic}
		readers.Add(1)
		go func() { defer readers.Done(); chains[i].readWS(ws) }()
	}
	for i := nWS; i < nWS+nSS; i++ {
		resp, err := http.Get(r.url + "/v1/stream?topic=" + topic)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		bodies = append(bodies, resp)
		chains[i] = &chain{topic: topic}
		readers.Add(1)
		go func() { defer readers.Done(); chains[i].readSSE(resp) }()
	}
	r.waitClients(t, nWS+nSS, 1)
	return conns, chains
}

// atLeast waits until every chain has more than its count in since (nil:
// n messages), and returns the counts then.
func atLeast(t *testing.T, what string, chains []*chain, since map[int]int64, n int64) map[int]int64 {
	t.Helper()
	counts := make(map[int]int64)
	waitFor(t, what, func() bool {
		for i, c := range chains {
			if counts[i] = c.count.Load(); counts[i] < since[i]+n {
				return false
			}
		}
		return true
	})
	return counts
}

// The done-when, with the endpoints: 100 WebSocket and 10 SSE
// clients follow a ticker whose every message names the one before it,
// published alike by the running upstream and a second one; a reload
// that adds an offered topic, changes the allowed origins, raises the
// per-client topic limit and replaces the upstream by the second server
// drops none of them and loses none of their messages (no chain
// breaks); the sidecar's upstream moved (the old server lost its
// connection, the new one holds the topic), and /v1/status shows the
// new endpoint and the new version.
func TestReloadMovesTheUpstreamKeepingEveryClient(t *testing.T) {
	const nWS, nSS = 100, 10
	var running sidecar.Config
	r := newRig(t, deribit.Name, func(c *sidecar.Config) {
		c.Topics = []string{tickBTC}
		c.AllowedOrigins = []string{"http://old.example"}
		c.MaxTopicsPerClient = 1
		running = *c
	})
	next := exchangetest.NewServer(deribit.Name)
	t.Cleanup(next.Close)
	teeTicker(t, tickBTC, 5*time.Millisecond, r.up, next)
	conns, chains := followers(t, r, tickBTC, nWS, nSS)
	atLeast(t, "every client's first messages", chains, nil, 5)
	before := r.sc.Status().Config.Version

	cfg := running
	cfg.Upstream = next.URL()
	cfg.Topics = []string{tickBTC, tickETH}
	cfg.AllowedOrigins = []string{"http://new.example"}
	cfg.MaxTopicsPerClient = 2
	res, err := r.sc.Reload(func() (sidecar.Config, error) { return cfg, nil })
	require.NoError(t, err)
	require.NoError(t, res.EndpointsKept)
	assert.Equal(t, []string{"upstream", "topics", "max_topics_per_client", "allowed_origins"}, res.Changed)
	assert.NotEqual(t, before, res.Version)
	at := atLeast(t, "messages after the reload", chains, nil, 0)

	assert.Equal(t, 1, next.Subscribers(tickBTC), "the new upstream holds the topic")
	waitFor(t, "the old upstream left", func() bool { return r.up.Connections() == 0 })
	st := r.sc.Status()
	assert.Equal(t, res.Version, st.Config.Version)
	assert.Equal(t, next.URL(), st.Upstream.Endpoint)
	assert.Equal(t, []string{next.URL()}, st.Upstream.Endpoints)
	assert.Equal(t, "connected", st.Upstream.State)
	assert.Zero(t, st.Upstream.Reconnects, "the upstream moved without a reconnect")
	// The new settings are in force: a client holding one topic takes a
	// second (the new one, on the new upstream); the new origin is let in.
	testutil.Send(t, conns[0], fmt.Sprintf(`{"jsonrpc":"2.0","id":999,"method":"public/subscribe","params":{"channels":[%q]}}`, tickETH))
	waitFor(t, "the second topic", func() bool { return r.client(t, conns[0]).Topics == 2 })
	assert.Equal(t, 1, next.Subscribers(tickETH))
	assert.Equal(t, http.StatusOK, originStatus(t, r, "http://new.example"))

	atLeast(t, "every client's messages on the new upstream", chains, at, 20)
	assert.Equal(t, nWS+nSS, len(r.sc.Status().Clients))
	for i, c := range chains {
		assert.Zero(t, c.breaks.Load(), "client %d lost messages", i)
		assert.Nil(t, c.ended.Load(), "client %d's stream ended", i)
	}
}

// With cancel-on-disconnect held on the upstream connection (a program
// made it: BlockedMethods lets it through), the move to a new endpoint
// is refused and said in ReloadResult.EndpointsKept; the rest of the
// reload applies, the version is that of the configuration in force
// (the old endpoints), and the clients keep their messages. A reload
// whose only change is the endpoints is then refused whole.
func TestReloadKeepsTheUpstreamWhileCancelOnDisconnectHolds(t *testing.T) {
	const cod = "private/enable_cancel_on_disconnect"
	var running sidecar.Config
	r := newRig(t, deribit.Name, func(c *sidecar.Config) {
		c.Topics = []string{tickBTC}
		c.BlockedMethods = []string{"private/logout"}
		running = *c
	})
	r.up.Handle(cod, func(json.RawMessage) (any, *protocol.Error) { return "ok", nil })
	next := exchangetest.NewServer(deribit.Name)
	t.Cleanup(next.Close)
	teeTicker(t, tickBTC, 5*time.Millisecond, r.up, next)
	_, chains := followers(t, r, tickBTC, 10, 2)
	atLeast(t, "every client's first messages", chains, nil, 5)
	trader := r.dial(t)
	testutil.Send(t, trader, fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":%q,"params":{"scope":"connection"}}`, cod))
	assert.Contains(t, testutil.Recv(t, trader), `"result":"ok"`)

	cfg := running
	cfg.Upstream = next.URL()
	cfg.Topics = []string{tickBTC, tickETH}
	res, err := r.sc.Reload(func() (sidecar.Config, error) { return cfg, nil })
	require.NoError(t, err, "the rest of the reload applies")
	require.ErrorIs(t, res.EndpointsKept, client.ErrSettingHeld)
	assert.Equal(t, []string{"topics"}, res.Changed)
	st := r.sc.Status()
	assert.Equal(t, res.Version, st.Config.Version)
	assert.Equal(t, []string{r.up.URL()}, st.Upstream.Endpoints)
	assert.Equal(t, r.up.URL(), st.Upstream.Endpoint)
	assert.Len(t, st.Offered, 2, "the new topic is offered")
	assert.Zero(t, next.Connections(), "nothing was dialled")

	// The same reload again: only the endpoints differ, refused.
	_, err = r.sc.Reload(func() (sidecar.Config, error) { return cfg, nil })
	require.ErrorIs(t, err, client.ErrSettingHeld)
	st = r.sc.Status()
	assert.Equal(t, res.Version, st.Config.Version)
	assert.Equal(t, map[string]uint64{"applied": 1, "refused": 1, "invalid": 0}, st.Config.Reloads)

	at := atLeast(t, "messages after the reloads", chains, nil, 0)
	atLeast(t, "more messages", chains, at, 10)
	for i, c := range chains {
		assert.Zero(t, c.breaks.Load(), "client %d lost messages", i)
		assert.Nil(t, c.ended.Load(), "client %d's stream ended", i)
	}
}

// A hot standby keeps its endpoints, saying why; the rest applies.
func TestReloadKeepsAStandbysEndpoints(t *testing.T) {
	var running sidecar.Config
	r := newRig(t, deribit.Name, func(c *sidecar.Config) { c.HotStandby = 1; running = *c })
	next := exchangetest.NewServer(deribit.Name)
	t.Cleanup(next.Close)
	cfg := running
	cfg.Upstream = next.URL()
	cfg.MaxBatch = 7
	res, err := r.sc.Reload(func() (sidecar.Config, error) { return cfg, nil })
	require.NoError(t, err)
	require.Error(t, res.EndpointsKept)
	assert.Contains(t, res.EndpointsKept.Error(), "hot standby")
	assert.Equal(t, []string{"max_batch"}, res.Changed)
	assert.Zero(t, next.Connections())
}
