package sidecar_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/deribit"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/sidecar"
)

// chain follows one client's Deribit book stream: each change names the
// change_id of the one before it (prev_change_id), so a lost message is
// a break in the chain.
type chain struct {
	topic  string       // the book followed; other topics' messages are skipped
	last   atomic.Int64 // the last change_id, 0 before the snapshot
	count  atomic.Int64 // messages received
	breaks atomic.Int64 // messages whose prev_change_id was not the last change_id
	ended  atomic.Value // the error that ended the stream (a string)
}

// book is the part of a Deribit book notification the chain reads: the
// payload under params.data (WebSocket) or data (SSE).
type bookChange struct {
	ChangeID     int64  `json:"change_id"`
	PrevChangeID *int64 `json:"prev_change_id"`
}

func (c *chain) take(b bookChange) {
	if b.PrevChangeID != nil && c.last.Load() != 0 && *b.PrevChangeID != c.last.Load() {
		c.breaks.Add(1)
	}
	c.last.Store(b.ChangeID)
	c.count.Add(1)
}

// readWS follows ws's notifications until it ends.
func (c *chain) readWS(ws *websocket.Conn) {
	for {
		_, data, err := ws.ReadMessage()
		if err != nil {
			c.ended.Store(err.Error())
			return
		}
		var f struct {
			Method string `json:"method"`
			Params struct {
				Channel string     `json:"channel"`
				Data    bookChange `json:"data"`
			} `json:"params"`
		}
		if json.Unmarshal(data, &f) == nil && f.Method == "subscription" && f.Params.Channel == c.topic {
			c.take(f.Params.Data)
		}
	}
}

// readSSE follows an SSE stream's message events until it ends.
func (c *chain) readSSE(resp *http.Response) {
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		payload, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var ev struct {
			Data bookChange `json:"data"`
		}
		if json.Unmarshal([]byte(payload), &ev) == nil {
			c.take(ev.Data)
		}
	}
	c.ended.Store(fmt.Sprint("stream ended: ", sc.Err()))
}

// The done-when: with 100 WebSocket and 10 SSE clients following
// a book while the feed runs, a reload that adds an offered topic,
// changes the allowed origins and raises the per-client topic limit
// drops none of them and loses none of their messages (the book's
// change_id chain stays whole); the new topic, origin and limit apply at
// once; /v1/status shows the new version. A reload that also changes the
// listen address is refused whole: its other changes are not applied.
func TestReloadKeepsEveryClient(t *testing.T) {
	const (
		btc = "book.BTC-PERPETUAL.100ms"
		eth = "book.ETH-PERPETUAL.100ms"
		nWS = 100
		nSS = 10
	)
	base := func(c *sidecar.Config) {
		c.Topics = []string{btc}
		c.AllowedOrigins = []string{"http://old.example"}
		c.MaxTopicsPerClient = 1
	}
	var running sidecar.Config
	r := newRig(t, deribit.Name, func(c *sidecar.Config) { base(c); running = *c })
	r.up.StartFeed(exchangetest.FeedOptions{Instruments: []string{"BTC-PERPETUAL", "ETH-PERPETUAL"}, Interval: 5 * time.Millisecond})
	defer r.up.StopFeed()
	before := r.sc.Status().Config
	require.NotEmpty(t, before.Version)

	conns, chains := followers(t, r, btc, nWS, nSS)
	atLeast(t, "every client's first messages", chains, nil, 5)

	// Before: the new topic and origin are refused.
	probe := r.dial(t)
	testutil.Send(t, probe, fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"public/subscribe","params":{"channels":[%q]}}`, eth))
	assert.Contains(t, testutil.Recv(t, probe), "error")
	assert.Equal(t, http.StatusForbidden, originStatus(t, r, "http://new.example"))

	next := running
	next.Topics = []string{btc, eth}
	next.AllowedOrigins = []string{"http://new.example"}
	next.MaxTopicsPerClient = 2
	res, err := r.sc.Reload(func() (sidecar.Config, error) { return next, nil })
	require.NoError(t, err)
	assert.Equal(t, []string{"topics", "max_topics_per_client", "allowed_origins"}, res.Changed)
	assert.NotEqual(t, before.Version, res.Version)
	at := atLeast(t, "messages after the reload", chains, nil, 0)

	// After: every client still there, the new settings in force: a
	// client holding one topic takes a second.
	testutil.Send(t, conns[0], fmt.Sprintf(`{"jsonrpc":"2.0","id":999,"method":"public/subscribe","params":{"channels":[%q]}}`, eth))
	waitFor(t, "the second topic", func() bool { return r.client(t, conns[0]).Topics == 2 })
	assert.Equal(t, http.StatusOK, originStatus(t, r, "http://new.example"))
	assert.Equal(t, http.StatusForbidden, originStatus(t, r, "http://old.example"))
	st := r.sc.Status()
	assert.Equal(t, res.Version, st.Config.Version)
	assert.Equal(t, uint64(1), st.Config.Reloads["applied"])
	var offered []string
	for _, o := range st.Offered {
		offered = append(offered, o.Topic)
	}
	assert.Equal(t, []string{btc, eth}, offered)

	// A reload changing the listen address is refused whole.
	refused := next
	refused.Listen = "127.0.0.1:1"
	refused.Topics = []string{btc}
	_, err = r.sc.Reload(func() (sidecar.Config, error) { return refused, nil })
	require.ErrorIs(t, err, sidecar.ErrNeedsRestart)
	assert.Contains(t, err.Error(), "listen")
	st = r.sc.Status()
	assert.Equal(t, res.Version, st.Config.Version)
	assert.Len(t, st.Offered, 2, "the refused reload's topics were applied")
	assert.Equal(t, uint64(1), st.Config.Reloads["refused"])
	_, body := httpGet(t, r.url+"/metrics")
	assert.Contains(t, body, `wsfan_sidecar_config_reloads_total{outcome="refused"} 1`)

	// Every client goes on receiving, its chain whole.
	atLeast(t, "every client's messages after the reloads", chains, at, 20)
	assert.Equal(t, nWS+nSS+1, len(r.sc.Status().Clients), "clients after the reloads (the probe included)")
	for i, c := range chains {
		assert.Zero(t, c.breaks.Load(), "client %d lost messages", i)
		assert.Nil(t, c.ended.Load(), "client %d's stream ended", i)
	}
}

// originStatus returns the status of an SSE request from a page of
// origin (answered at once: no topic is asked).
func originStatus(t *testing.T, r *rig, origin string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, r.url+"/v1/status", nil)
	require.NoError(t, err)
	req.Header.Set("Origin", origin)
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_ = resp.Body.Close()
	return resp.StatusCode
}

// A removed token refuses new requests and closes the clients that
// connected with it, with close code 1008 and the reason; the clients of
// a token that stays are untouched. -token's list is comma-separated.
func TestReloadRemovedTokenClosesItsClients(t *testing.T) {
	var running sidecar.Config
	r := newRig(t, deribit.Name, func(c *sidecar.Config) { c.Token = "keep-token-0123456789,drop-token-0123456789"; running = *c })
	dial := func(token string) *websocket.Conn {
		return r.dialWith(t, "", http.Header{"Authorization": {"Bearer " + token}})
	}
	kept, dropped := dial("keep-token-0123456789"), dial("drop-token-0123456789")
	waitFor(t, "two clients", func() bool { return len(r.sc.Status().Clients) == 2 })

	next := running
	next.Token = "keep-token-0123456789"
	res, err := r.sc.Reload(func() (sidecar.Config, error) { return next, nil })
	require.NoError(t, err)
	assert.Equal(t, []string{"token"}, res.Changed)

	_ = dropped.SetReadDeadline(time.Now().Add(time10s))
	_, _, err = dropped.ReadMessage()
	var ce *websocket.CloseError
	require.True(t, errors.As(err, &ce), "want a close frame, got %v", err)
	assert.Equal(t, websocket.ClosePolicyViolation, ce.Code)
	assert.Contains(t, ce.Text, "token")

	testutil.Send(t, kept, `{"jsonrpc":"2.0","id":1,"method":"public/subscribe","params":{"channels":["book.BTC-PERPETUAL.100ms"]}}`)
	assert.Contains(t, testutil.Recv(t, kept), `"id":1`)
	_, _, err = websocket.DefaultDialer.Dial(r.wsURL(), http.Header{"Authorization": {"Bearer drop-token-0123456789"}})
	assert.ErrorIs(t, err, websocket.ErrBadHandshake)
}

// A configuration New would refuse, or a failed load, is counted as
// invalid and changes nothing.
func TestReloadInvalidChangesNothing(t *testing.T) {
	var running sidecar.Config
	r := newRig(t, deribit.Name, func(c *sidecar.Config) { running = *c })
	v := r.sc.Status().Config.Version
	_, err := r.sc.Reload(func() (sidecar.Config, error) { return sidecar.Config{}, errors.New("config file: line 3: bad") })
	assert.ErrorContains(t, err, "line 3")
	bad := running
	bad.AllowedHosts = []string{"*.*"}
	_, err = r.sc.Reload(func() (sidecar.Config, error) { return bad, nil })
	assert.Error(t, err)
	same, err := r.sc.Reload(func() (sidecar.Config, error) { return running, nil })
	require.NoError(t, err)
	assert.Empty(t, same.Changed)
	st := r.sc.Status().Config
	assert.Equal(t, v, st.Version)
	assert.Equal(t, map[string]uint64{"applied": 1, "refused": 0, "invalid": 2}, st.Reloads)
}

// A Token of separators alone is no token: a sidecar off loopback
// refuses it, at start and on reload.
func TestTokenOfCommasIsNone(t *testing.T) {
	_, err := sidecar.New(sidecar.Config{Upstream: "ws://127.0.0.1:1", Protocol: "deribit", Listen: "0.0.0.0:0", Token: " , "})
	assert.ErrorContains(t, err, "requires a token")
}
