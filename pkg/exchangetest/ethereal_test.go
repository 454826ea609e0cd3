package exchangetest_test

import (
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/ethereal"
	"github.com/wsfan/wsfan/pkg/exchangetest"
)

func TestEtherealSubscribePublish(t *testing.T) {
	srv := newServer(t, ethereal.Name)
	srv.SetRefused("L2Book:ETHUSD")
	ws := dial(t, srv)

	testutil.Send(t, ws, `{"event":"subscribe","data":{"type":"L2Book","symbol":"BTCUSD"}}`)
	testutil.Send(t, ws, `{"event":"subscribe","data":{"type":"L2Book","symbol":"ETHUSD"}}`)
	testutil.Send(t, ws, `{"event":"subscribe","data":{"type":"OrderUpdate","subaccountId":"sa-1"}}`)
	require.NoError(t, srv.WaitReceived(testutil.Context(t), "subscribe", 3))
	require.NoError(t, srv.WaitSubscribers(testutil.Context(t), "OrderUpdate:sa-1", 1))
	require.EqualValues(t, 1, srv.Subscribers("L2Book:BTCUSD"))
	require.EqualValues(t, 0, srv.Subscribers("L2Book:ETHUSD"))

	// Each event is answered in order by a status frame without an id.
	require.Equal(t, `{"ok":true}`, testutil.Recv(t, ws))
	require.Equal(t, `{"ok":false,"code":"SUBSCRIPTION_REFUSED","message":"subscription L2Book:ETHUSD refused"}`, testutil.Recv(t, ws))
	require.Equal(t, `{"ok":true}`, testutil.Recv(t, ws))

	require.EqualValues(t, 1, srv.Publish("L2Book:BTCUSD", []byte(`{"s":"BTCUSD"}`)))
	got := testutil.Recv(t, ws)
	if !regexp.MustCompile(`^\{"e":"L2Book","t":\d{13},"data":\{"s":"BTCUSD"\}\}$`).MatchString(got) {
		t.Fatalf("notification %s", got)
	}

	testutil.Send(t, ws, `{"event":"unsubscribe","data":{"type":"L2Book","symbol":"BTCUSD"}}`)
	require.NoError(t, srv.WaitSubscribers(testutil.Context(t), "L2Book:BTCUSD", 0))
	require.Equal(t, `{"ok":true}`, testutil.Recv(t, ws))
	testutil.Send(t, ws, `{"event":"ping"}`) // not a subscription event: no answer
	require.NoError(t, srv.WaitReceived(testutil.Context(t), "ping", 1))
	noMessage(t, ws, 50*time.Millisecond)
}

// Past the per-connection subscription limit the service refuses with
// SUBSCRIPTION_LIMIT_EXCEEDED; a repeated subscribe is no new topic; only
// account streams count, market data never
// (https://docs.ethereal.trade/developer-guides/trading-api/websockets).
func TestEtherealSubscriptionLimit(t *testing.T) {
	srv := newServer(t, ethereal.Name, exchangetest.WithTopicCap(1))
	ws := dial(t, srv)
	testutil.Send(t, ws, `{"event":"subscribe","data":{"type":"OrderUpdate","subaccountId":"sa-1"}}`)
	testutil.Send(t, ws, `{"event":"subscribe","data":{"type":"OrderUpdate","subaccountId":"sa-1"}}`)
	testutil.Send(t, ws, `{"event":"subscribe","data":{"type":"L2Book","symbol":"BTCUSD"}}`)
	testutil.Send(t, ws, `{"event":"subscribe","data":{"type":"OrderUpdate","subaccountId":"sa-2"}}`)
	require.Equal(t, `{"ok":true}`, testutil.Recv(t, ws))
	require.Equal(t, `{"ok":true}`, testutil.Recv(t, ws))
	require.Equal(t, `{"ok":true}`, testutil.Recv(t, ws), "market data is not limited")
	require.Equal(t, `{"ok":false,"code":"SUBSCRIPTION_LIMIT_EXCEEDED"}`, testutil.Recv(t, ws))
	require.EqualValues(t, 0, srv.Subscribers("OrderUpdate:sa-2"))
	require.EqualValues(t, 1, srv.Subscribers("L2Book:BTCUSD"))
}

// WithQuietAccepts answers only refusals.
func TestEtherealQuietAccepts(t *testing.T) {
	srv := newServer(t, ethereal.Name, exchangetest.WithQuietAccepts(), exchangetest.WithTopicCap(1))
	ws := dial(t, srv)
	testutil.Send(t, ws, `{"event":"subscribe","data":{"type":"OrderUpdate","subaccountId":"sa-1"}}`)
	testutil.Send(t, ws, `{"event":"subscribe","data":{"type":"OrderUpdate","subaccountId":"sa-2"}}`)
	require.Equal(t, `{"ok":false,"code":"SUBSCRIPTION_LIMIT_EXCEEDED"}`, testutil.Recv(t, ws))
}

// WithRateLimit charges Ethereal's subscribe events, as its WebSocket
// budget does: past the burst a subscribe is refused, and an unsubscribe
// is not charged.
func TestEtherealSubscribesAreCharged(t *testing.T) {
	srv := newServer(t, ethereal.Name, exchangetest.WithRateLimit(0.001, 2))
	ws := dial(t, srv)
	for _, sym := range []string{"BTCUSD", "ETHUSD", "SOLUSD"} {
		testutil.Send(t, ws, `{"event":"subscribe","data":{"type":"L2Book","symbol":"`+sym+`"}}`)
	}
	testutil.Send(t, ws, `{"event":"unsubscribe","data":{"type":"L2Book","symbol":"BTCUSD"}}`)
	require.Equal(t, `{"ok":true}`, testutil.Recv(t, ws))
	require.Equal(t, `{"ok":true}`, testutil.Recv(t, ws))
	require.Equal(t, `{"ok":false,"code":"RATE_LIMIT_IP"}`, testutil.Recv(t, ws))
	require.Equal(t, `{"ok":true}`, testutil.Recv(t, ws), "an unsubscribe costs nothing")
}
