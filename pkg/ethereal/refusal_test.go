package ethereal_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/ethereal"
	"github.com/wsfan/wsfan/pkg/exchangetest"
)

// dialEthereal connects a client to srv, closed with the test.
func dialEthereal(t *testing.T, srv *exchangetest.Server, opts ...client.Option) *client.Client {
	t.Helper()
	opts = append([]client.Option{client.WithProtocol(ethereal.Protocol())}, opts...)
	c, err := client.Dial(testutil.Context(t), srv.URL(), opts...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// dialRaw connects a bare WebSocket to srv, closed with the test.
func dialRaw(t *testing.T, srv *exchangetest.Server) *websocket.Conn {
	t.Helper()
	ws, resp, err := websocket.DefaultDialer.DialContext(testutil.Context(t), srv.URL(), nil)
	require.NoError(t, err)
	_ = resp.Body.Close()
	t.Cleanup(func() { _ = ws.Close() })
	return ws
}

// Subaccount ids of the tests' account streams.
const (
	subA = "a9a3b9b0-7f5e-4b55-8e2f-1c7e0d1e2f3a"
	subB = "00000000-0000-0000-0000-000000000001"
)

// stillDelivers publishes an event of topic (a Ticker of BTCUSD, or an
// account event of the subaccount it names) and checks sub, which holds
// topic, gets it.
func stillDelivers(t *testing.T, srv *exchangetest.Server, sub *client.Subscription, topic string) {
	t.Helper()
	typ, id, _ := strings.Cut(topic, ":")
	if typ == "Ticker" {
		srv.PublishRaw([]byte(`{"e":"Ticker","t":1,"data":{"s":"` + id + `","markPrice":"1"}}`))
	} else {
		srv.PublishRaw([]byte(`{"e":"` + typ + `","t":1,"data":{"sid":"` + id + `"}}`))
	}
	select {
	case m := <-sub.C():
		assert.Equal(t, topic, m.Topic)
	case <-testutil.Context(t).Done():
		t.Fatalf("the subscription holding %s got nothing", topic)
	}
}

// An account subscribe past the per-connection limit fails with the
// service's code, {"ok":false,"code":"SUBSCRIPTION_LIMIT_EXCEEDED"}
// (https://docs.ethereal.trade/developer-guides/trading-api/websockets),
// naming the topic; the subscriptions already held go on. The limit
// counts (subaccountId, streamType) pairs: another stream type of the
// same subaccount is a second pair.
func TestRefusalFailsSubscribeWithItsCode(t *testing.T) {
	srv := exchangetest.NewServer(ethereal.Name, exchangetest.WithTopicCap(1))
	t.Cleanup(srv.Close)
	c := dialEthereal(t, srv)
	ctx := testutil.Context(t)

	held, err := c.Subscribe(ctx, []string{"OrderUpdate:" + subA})
	require.NoError(t, err)
	sub, err := c.Subscribe(ctx, []string{"PositionUpdate:" + subA})
	require.Nil(t, sub)
	var refused *client.RefusedError
	require.ErrorAs(t, err, &refused)
	assert.Equal(t, []string{"PositionUpdate:" + subA}, refused.Topics)
	assert.Equal(t, `wsfan: server refused "PositionUpdate:`+subA+`": rpc error: SUBSCRIPTION_LIMIT_EXCEEDED`, err.Error())

	stillDelivers(t, srv, held, "OrderUpdate:"+subA)
}

// The same (subaccountId, streamType) pair subscribed again on the
// connection is no second subscription: it is accepted at the limit, and
// a new pair is still refused with the documented frame. (The topic
// syntax, TYPE:SUBACCOUNT_ID, names a pair one way only, so the same
// pair is the same topic.)
func TestSamePairCountsOnce(t *testing.T) {
	srv := exchangetest.NewServer(ethereal.Name, exchangetest.WithTopicCap(1))
	t.Cleanup(srv.Close)
	ws := dialRaw(t, srv)
	same := `{"event":"subscribe","data":{"type":"OrderFill","subaccountId":"` + subA + `"}}`
	testutil.Send(t, ws, same)
	testutil.Send(t, ws, same)
	testutil.Send(t, ws, `{"event":"subscribe","data":{"type":"OrderFill","subaccountId":"`+subB+`"}}`)
	assert.Equal(t, `{"ok":true}`, testutil.Recv(t, ws))
	assert.Equal(t, `{"ok":true}`, testutil.Recv(t, ws), "the same pair again counts once")
	assert.Equal(t, `{"ok":false,"code":"SUBSCRIPTION_LIMIT_EXCEEDED"}`, testutil.Recv(t, ws), "another subaccount is another pair")
	assert.EqualValues(t, 1, srv.Subscribers("OrderFill:"+subA))
	assert.EqualValues(t, 0, srv.Subscribers("OrderFill:"+subB))
}

// Market-data channels (L2Book, Ticker, TradeFill) are not subject to
// the subscription limit
// (https://docs.ethereal.trade/developer-guides/trading-api/websockets):
// past it, a market topic is still accepted, and an account stream still
// refused.
func TestMarketTopicsAreNotLimited(t *testing.T) {
	srv := exchangetest.NewServer(ethereal.Name, exchangetest.WithTopicCap(1))
	t.Cleanup(srv.Close)
	c := dialEthereal(t, srv)
	ctx := testutil.Context(t)

	_, err := c.Subscribe(ctx, []string{"OrderUpdate:" + subA})
	require.NoError(t, err)
	market, err := c.Subscribe(ctx, []string{"L2Book:BTCUSD", "Ticker:BTCUSD", "TradeFill:BTCUSD", "Ticker:ETHUSD"})
	require.NoError(t, err, "market data is not limited")
	_, err = c.Subscribe(ctx, []string{"OrderUpdate:" + subB})
	var refused *client.RefusedError
	require.ErrorAs(t, err, &refused)
	assert.Contains(t, err.Error(), ethereal.SubscriptionLimitExceeded)
	stillDelivers(t, srv, market, "Ticker:BTCUSD")
}

// A service that answers only refusals: an unanswered subscribe is taken
// as accepted after AcceptAfter, and a refusal still fails the subscribe
// it answers.
func TestQuietServiceAcceptsBySilence(t *testing.T) {
	srv := exchangetest.NewServer(ethereal.Name, exchangetest.WithTopicCap(1), exchangetest.WithQuietAccepts())
	t.Cleanup(srv.Close)
	c := dialEthereal(t, srv)
	ctx := testutil.Context(t)

	held, err := c.Subscribe(ctx, []string{"PositionUpdate:" + subA})
	require.NoError(t, err, "accepted for its silence")
	require.NotNil(t, held)
	_, err = c.Subscribe(ctx, []string{"PositionUpdate:" + subB})
	require.ErrorIs(t, err, client.ErrRefused)
	assert.Contains(t, err.Error(), ethereal.SubscriptionLimitExceeded)
}

// Refused in part on a restore: after a restart the service takes one
// topic fewer; that one's subscription ends with a *RefusedError naming
// the code, the others keep delivering, and no second connection is made.
func TestRestoreRefusedInPart(t *testing.T) {
	srv := exchangetest.NewServer(ethereal.Name)
	t.Cleanup(srv.Close)
	c := dialEthereal(t, srv, client.WithBackoff(func() backoff.BackOff {
		return backoff.NewConstantBackOff(5 * time.Millisecond)
	}))
	ctx := testutil.Context(t)
	kept, err := c.Subscribe(ctx, []string{"Ticker:BTCUSD"})
	require.NoError(t, err)
	doomed, err := c.Subscribe(ctx, []string{"Ticker:ETHUSD"})
	require.NoError(t, err)

	srv.SetRefused("Ticker:ETHUSD")
	srv.DropConnections()
	var refused *client.RefusedError
	select {
	case err := <-doomed.Err():
		require.ErrorAs(t, err, &refused)
	case <-ctx.Done():
		t.Fatal("the refused subscription did not end")
	}
	assert.Equal(t, []string{"Ticker:ETHUSD"}, refused.Topics)

	require.NoError(t, srv.WaitSubscribers(ctx, "Ticker:BTCUSD", 1))
	stillDelivers(t, srv, kept, "Ticker:BTCUSD")
	// One restore, no loop: the connection that restored is the one
	// still open a while later.
	quiet, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	<-quiet.Done()
	assert.Equal(t, client.StateConnected, c.State())
	disconnects := 0
	for len(c.Events()) > 0 {
		if ev := <-c.Events(); ev.Kind == client.Disconnected {
			disconnects++
		}
	}
	assert.Equal(t, 1, disconnects, "one lost connection, one restore")
}

// A subscribe given up on (its context ended before the answer came)
// keeps its place: its late answer is not taken for the next request's,
// so a topic the service refuses after it is still refused.
func TestLateAnswerKeepsItsPlace(t *testing.T) {
	srv := exchangetest.NewServer(ethereal.Name)
	t.Cleanup(srv.Close)
	c := dialEthereal(t, srv)
	srv.SetRefused("Ticker:ETHUSD")
	srv.SetResponseDelay(300 * time.Millisecond)
	short, cancel := context.WithTimeout(testutil.Context(t), 100*time.Millisecond)
	defer cancel()
	_, err := c.Subscribe(short, []string{"Ticker:BTCUSD"})
	require.ErrorIs(t, err, client.ErrTimeout)

	_, err = c.Subscribe(testutil.Context(t), []string{"Ticker:ETHUSD"})
	require.ErrorIs(t, err, client.ErrRefused, "the late answer to BTCUSD is not ETHUSD's")
}

// A service that answers only refusals, once the client knows it: a
// refusal while two subscribes wait cannot be matched to either, so both
// fail, saying so, rather than one picked wrongly; the subscription held
// before goes on.
func TestAmbiguousRefusalFailsEveryWaitingRequest(t *testing.T) {
	srv := exchangetest.NewServer(ethereal.Name, exchangetest.WithTopicCap(2), exchangetest.WithQuietAccepts())
	t.Cleanup(srv.Close)
	c := dialEthereal(t, srv)
	ctx := testutil.Context(t)
	held, err := c.Subscribe(ctx, []string{"OrderUpdate:" + subA}) // accepted for its silence: the client learns the service
	require.NoError(t, err)

	// Past the limit: the second pair is accepted in silence, the third
	// refused, and the client cannot tell which of the two it answers.
	_, err = c.Subscribe(ctx, []string{"OrderFill:" + subA, "OrderFill:" + subB})
	var refused *client.RefusedError
	require.ErrorAs(t, err, &refused)
	assert.ElementsMatch(t, []string{"OrderFill:" + subA, "OrderFill:" + subB}, refused.Topics)
	assert.Contains(t, err.Error(), "each is taken as refused")

	stillDelivers(t, srv, held, "OrderUpdate:"+subA)
}
