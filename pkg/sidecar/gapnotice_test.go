package sidecar_test

import (
	"context"
	"net/http"
	"strings"
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
	"github.com/wsfan/wsfan/pkg/thalex"
)

// An upstream reconnect is told to every program that asked: a raw
// WebSocket client that opted in (header or query) gets a wsfan/gap
// notice naming the topic and the cause right before the first message
// after it, the SDK through the sidecar sees that message flagged
// Reconnected as it would directly, and a client that did not ask gets
// the venue's frames alone (TestUpstreamRestartIsInvisible).
func TestGapNoticeAfterUpstreamReconnect(t *testing.T) {
	for _, dc := range dialects {
		t.Run(dc.name, func(t *testing.T) {
			r := newRig(t, dc.d, nil)
			ctx := testutil.Context(t)
			byHeader := r.dialWith(t, "", http.Header{protocol.NotifyHeader: {protocol.NotifyGaps}})
			byQuery := r.dialWith(t, "?notify=gaps", nil)
			localID := subscribeAll(t, dc, byHeader, byQuery)

			proto, err := protocol.ByName(dc.d.String())
			require.NoError(t, err)
			sdk, err := client.Dial(ctx, r.wsURL(), client.WithProtocol(proto))
			require.NoError(t, err)
			defer func() { _ = sdk.Close() }()
			sub, err := sdk.Subscribe(ctx, []string{dc.topic})
			require.NoError(t, err)
			r.waitClients(t, 3, 1)
			require.NoError(t, r.up.WaitSubscribers(ctx, dc.topic, 1))

			r.up.Stop()
			require.NoError(t, r.up.Start())
			require.NoError(t, r.up.WaitSubscribers(ctx, dc.topic, 1))
			r.up.Publish(dc.topic, []byte(payload(1)))

			for _, ws := range []*websocket.Conn{byHeader, byQuery} {
				n, ok := protocol.ParseGapNotice([]byte(testutil.Recv(t, ws)))
				require.True(t, ok, "a gap notice first")
				assert.Equal(t, protocol.GapNotice{Channel: dc.topic, Subscription: localID, Cause: protocol.GapReconnected}, n)
				expectFrame(t, dc, ws, localID, 1)
			}
			select {
			case m := <-sub.C():
				assert.True(t, m.Reconnected(), "the SDK behind the sidecar is told, as it would be directly")
				assert.Contains(t, string(m.Data), strings.Trim(payload(1), "{}"))
			case <-ctx.Done():
				t.Fatal("no message after the upstream reconnect")
			}
		})
	}
}

// A break in a book's chain upstream (Deribit's prev_change_id) is told
// too: the opted-in client gets a notice with cause "gap" before the
// message that does not follow.
func TestGapNoticeAfterABrokenChain(t *testing.T) {
	const topic = "book.BTC-PERPETUAL.100ms"
	r := newRig(t, deribit.Name, nil)
	r.up.StartFeed(exchangetest.FeedOptions{Instruments: []string{"BTC-PERPETUAL"}, Interval: 10 * time.Millisecond})
	defer r.up.StopFeed()
	ws := r.dialWith(t, "?notify=gaps", nil)
	testutil.Send(t, ws, `{"jsonrpc":"2.0","id":1,"method":"public/subscribe","params":{"channels":["`+topic+`"]}}`)
	testutil.RecvJSON(t, ws)
	require.NoError(t, r.up.WaitSubscribers(testutil.Context(t), topic, 1))
	testutil.Recv(t, ws) // the snapshot: the chain has started
	require.NoError(t, r.up.LoseBookChanges(topic, 1))

	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		n, ok := protocol.ParseGapNotice([]byte(testutil.Recv(t, ws)))
		if !ok {
			continue
		}
		assert.Equal(t, protocol.GapNotice{Channel: topic, Cause: protocol.GapSequence}, n)
		return
	}
	t.Fatal("no gap notice after the broken chain")
}

// A topic found stale (silent while another flows) and resubscribed is a
// hole too: the opted-in client gets a notice with cause "stale" before
// the topic's next message (a NATS group's member flags a late run of
// messages the same way).
func TestGapNoticeAfterAStaleTopic(t *testing.T) {
	r := newRig(t, thalex.Name, func(c *sidecar.Config) {
		c.UpstreamOptions = []client.Option{client.WithStaleAfter(10, 300*time.Millisecond)}
	})
	ctx := testutil.Context(t)
	quiet, busy := "ticker.A.raw", "ticker.B.raw"
	ws := r.dialWith(t, "?notify=gaps", nil)
	testutil.Send(t, ws, `{"jsonrpc":"2.0","id":1,"method":"public/subscribe","params":{"channels":["`+quiet+`","`+busy+`"]}}`)
	testutil.RecvJSON(t, ws)
	require.NoError(t, r.up.WaitSubscribers(ctx, quiet, 1))
	require.NoError(t, r.up.WaitSubscribers(ctx, busy, 1))
	notices := make(chan protocol.GapNotice, 16)
	go func() { // the client reads what it is sent
		defer close(notices)
		for {
			_, data, err := ws.ReadMessage()
			if err != nil {
				return
			}
			if n, ok := protocol.ParseGapNotice(data); ok {
				notices <- n
			}
		}
	}()
	for range 40 { // the rhythm records one every 15ms: 17 needed
		r.up.Publish(quiet, []byte(`{"n":1}`))
		r.up.Publish(busy, []byte(`{"n":1}`))
		time.Sleep(10 * time.Millisecond)
	}
	flow, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		for flow.Err() == nil {
			r.up.Publish(busy, []byte(`{"n":2}`))
			time.Sleep(10 * time.Millisecond)
		}
	}()
	waitFor(t, "the quiet topic stale", func() bool { return topicStatus(r.sc.Status(), quiet).Stale })
	require.NoError(t, r.up.WaitSubscribers(ctx, quiet, 1)) // resubscribed
	deadline := time.After(10 * time.Second)
	for {
		r.up.Publish(quiet, []byte(`{"n":3}`))
		select {
		case n := <-notices:
			assert.Equal(t, protocol.GapNotice{Channel: quiet, Cause: protocol.GapStale}, n)
			return
		case <-deadline:
			t.Fatal("no stale notice before the quiet topic's next message")
		case <-time.After(50 * time.Millisecond):
		}
	}
}
