package ethereal_test

import (
	"context"
	"testing"
	"time"

	"github.com/cenkalti/backoff/v4"
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

// stillDelivers publishes a MarketPrice of BTCUSD and checks sub, which
// holds that topic, gets it.
func stillDelivers(t *testing.T, srv *exchangetest.Server, sub *client.Subscription) {
	t.Helper()
	srv.PublishRaw([]byte(`{"e":"MarketPrice","t":1,"data":{"s":"BTCUSD","markPrice":"1"}}`))
	select {
	case m := <-sub.C():
		assert.Equal(t, "MarketPrice:BTCUSD", m.Topic)
	case <-testutil.Context(t).Done():
		t.Fatal("the subscription holding MarketPrice:BTCUSD got nothing")
	}
}

// A subscribe past the per-connection limit fails with the service's
// code, {"ok":false,"code":"SUBSCRIPTION_LIMIT_EXCEEDED"}, naming the
// topic; the subscriptions already held go on.
func TestRefusalFailsSubscribeWithItsCode(t *testing.T) {
	srv := exchangetest.NewServer(ethereal.Name, exchangetest.WithTopicCap(1))
	t.Cleanup(srv.Close)
	c := dialEthereal(t, srv)
	ctx := testutil.Context(t)

	held, err := c.Subscribe(ctx, []string{"MarketPrice:BTCUSD"})
	require.NoError(t, err)
	sub, err := c.Subscribe(ctx, []string{"MarketPrice:ETHUSD"})
	require.Nil(t, sub)
	var refused *client.RefusedError
	require.ErrorAs(t, err, &refused)
	assert.Equal(t, []string{"MarketPrice:ETHUSD"}, refused.Topics)
	assert.Equal(t, `wsfan: server refused "MarketPrice:ETHUSD": rpc error: SUBSCRIPTION_LIMIT_EXCEEDED`, err.Error())

	stillDelivers(t, srv, held)
}

// A service that answers only refusals: an unanswered subscribe is taken
// as accepted after AcceptAfter, and a refusal still fails the subscribe
// it answers.
func TestQuietServiceAcceptsBySilence(t *testing.T) {
	srv := exchangetest.NewServer(ethereal.Name, exchangetest.WithTopicCap(1), exchangetest.WithQuietAccepts())
	t.Cleanup(srv.Close)
	c := dialEthereal(t, srv)
	ctx := testutil.Context(t)

	held, err := c.Subscribe(ctx, []string{"PositionUpdate:a9a3b9b0-7f5e-4b55-8e2f-1c7e0d1e2f3a"})
	require.NoError(t, err, "accepted for its silence")
	require.NotNil(t, held)
	_, err = c.Subscribe(ctx, []string{"MarketPrice:ETHUSD"})
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
	kept, err := c.Subscribe(ctx, []string{"MarketPrice:BTCUSD"})
	require.NoError(t, err)
	doomed, err := c.Subscribe(ctx, []string{"MarketPrice:ETHUSD"})
	require.NoError(t, err)

	srv.SetRefused("MarketPrice:ETHUSD")
	srv.DropConnections()
	var refused *client.RefusedError
	select {
	case err := <-doomed.Err():
		require.ErrorAs(t, err, &refused)
	case <-ctx.Done():
		t.Fatal("the refused subscription did not end")
	}
	assert.Equal(t, []string{"MarketPrice:ETHUSD"}, refused.Topics)

	require.NoError(t, srv.WaitSubscribers(ctx, "MarketPrice:BTCUSD", 1))
	stillDelivers(t, srv, kept)
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
	srv.SetRefused("MarketPrice:ETHUSD")
	srv.SetResponseDelay(300 * time.Millisecond)
	short, cancel := context.WithTimeout(testutil.Context(t), 100*time.Millisecond)
	defer cancel()
	_, err := c.Subscribe(short, []string{"MarketPrice:BTCUSD"})
	require.ErrorIs(t, err, client.ErrTimeout)

	_, err = c.Subscribe(testutil.Context(t), []string{"MarketPrice:ETHUSD"})
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
	held, err := c.Subscribe(ctx, []string{"MarketPrice:BTCUSD"}) // accepted for its silence: the client learns the service
	require.NoError(t, err)

	_, err = c.Subscribe(ctx, []string{"MarketPrice:ETHUSD", "MarketPrice:SOLUSD"})
	var refused *client.RefusedError
	require.ErrorAs(t, err, &refused)
	assert.ElementsMatch(t, []string{"MarketPrice:ETHUSD", "MarketPrice:SOLUSD"}, refused.Topics)
	assert.Contains(t, err.Error(), "each is taken as refused")

	stillDelivers(t, srv, held)
}
