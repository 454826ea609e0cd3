package okx_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/okx"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// documentedFrame returns the frame of testdata/documented.txt that
// contains marker, so a test and the corpus check the same frame.
func documentedFrame(t *testing.T, marker string) []byte {
	t.Helper()
	for _, frame := range documented(t) {
		if strings.Contains(string(frame), marker) {
			return frame
		}
	}
	t.Fatalf("no documented frame holds %q", marker)
	return nil
}

// OKX's servers spell a 60018's argument with a space after the comma
// ("channel:index-tickers, instId:NEAR-USDT-SWAP"): the refusal is still
// the topic's, and only its.
func TestSpacedRefusalFindsItsTopic(t *testing.T) {
	p := okx.Protocol()
	var topics []*protocol.Topic
	for _, name := range []string{"index-tickers:BTC-USDT", "index-tickers:NEAR-USDT-SWAP", "index-tickers"} {
		tp, err := p.NewTopic(name)
		require.NoError(t, err)
		topics = append(topics, tp)
	}
	req := &protocol.Request{ID: 1, Topics: topics}
	i, whole := p.Venue().TopicAcks.RefusedTopic(req, documentedFrame(t, "index-tickers, instId:NEAR-USDT-SWAP"))
	assert.Equal(t, 1, i)
	assert.False(t, whole)
}

// A candlestick channel lives on /ws/v5/business: on a client of
// /ws/v5/public it is refused before it is sent, the error naming the
// URL to use, as a private channel on /ws/v5/business is; on
// /ws/v5/business it is subscribed.
func TestTopicOfAnotherURLIsRefusedBeforeItIsSent(t *testing.T) {
	srv := exchangetest.NewServer(okx.Name)
	t.Cleanup(srv.Close)
	ctx := testutil.Context(t)
	dialPath := func(path string, opts ...client.Option) *client.Client {
		opts = append([]client.Option{client.WithProtocol(okx.Protocol()), client.WithRequestTimeout(5 * time.Second)}, opts...)
		c, err := client.Dial(ctx, "ws://"+srv.Addr()+path, opts...)
		require.NoError(t, err)
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	_, err := dialPath(okx.PublicPath).Subscribe(ctx, []string{"tickers:BTC-USDT", "candle1m:BTC-USDT"})
	require.ErrorIs(t, err, protocol.ErrInvalidTopic)
	assert.Contains(t, err.Error(), "ws://"+srv.Addr()+"/ws/v5/business")
	for _, topic := range []string{"trades-all:BTC-USDT", "mark-price-candle1H:BTC-USDT-SWAP", "index-candle1D:BTC-USD"} {
		_, err := dialPath(okx.PublicPath).Subscribe(ctx, []string{topic})
		require.ErrorIs(t, err, protocol.ErrInvalidTopic, topic)
	}

	login := client.WithOnConnect(func(context.Context, *client.Client) error { return nil }) // no login: nothing is sent
	_, err = dialPath(okx.BusinessPath, login).Subscribe(ctx, []string{"orders:instType=ANY"})
	require.ErrorIs(t, err, protocol.ErrInvalidTopic)
	assert.Contains(t, err.Error(), "/ws/v5/private")
	_, err = dialPath(okx.PrivatePath, login).Subscribe(ctx, []string{"orders-algo:instType=ANY"})
	require.ErrorIs(t, err, protocol.ErrInvalidTopic, "algo orders moved to /ws/v5/business")
	assert.Contains(t, err.Error(), "/ws/v5/business")
	assert.Zero(t, srv.CountReceived("subscribe"), "nothing was sent")

	_, err = dialPath(okx.BusinessPath).Subscribe(ctx, []string{"candle1m:BTC-USDT"})
	require.NoError(t, err)
}

// The test exchange serves /ws/v5/business and refuses a candlestick
// channel asked on /ws/v5/public as OKX does: 60018 "Wrong URL or
// channel:candle1m,instId:BTC-USDT doesn't exist. …".
func TestExchangeRefusesABusinessChannelOnThePublicURL(t *testing.T) {
	srv := exchangetest.NewServer(okx.Name)
	t.Cleanup(srv.Close)
	ask := func(path string) map[string]any {
		ws, resp, err := websocket.DefaultDialer.Dial("ws://"+srv.Addr()+path, nil)
		require.NoError(t, err)
		_ = resp.Body.Close()
		defer ws.Close()
		require.NoError(t, ws.WriteMessage(websocket.TextMessage, []byte(`{"id":"1","op":"subscribe","args":[{"channel":"candle1m","instId":"BTC-USDT"}]}`)))
		require.NoError(t, ws.SetReadDeadline(time.Now().Add(5*time.Second)))
		_, got, err := ws.ReadMessage()
		require.NoError(t, err)
		var m map[string]any
		require.NoError(t, json.Unmarshal(got, &m), "%s", got)
		delete(m, "connId")
		return m
	}
	var want map[string]any
	require.NoError(t, json.Unmarshal(documentedFrame(t, "channel:candle1m,instId:BTC-USDT"), &want))
	delete(want, "connId")
	assert.Equal(t, want, ask(okx.PublicPath))
	assert.Equal(t, "subscribe", ask(okx.BusinessPath)["event"])
}
