package client_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/deribit"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// thalexServer checks logins against the first of rsaKeys.
func thalexServer(t *testing.T) *exchangetest.Server {
	return newServer(t, thalex.Name, exchangetest.WithLogin(thalex.NewServerLogin(thalex.ServerKey{ID: "key", Public: &testutil.RSAKeys()[0].PublicKey})))
}

// thalexLogin logs in with the first of rsaKeys, or the second.
func thalexLogin(registered bool) client.OnConnect {
	if registered {
		return thalex.Login(thalex.NewKey("key", testutil.RSAKeys()[0]))
	}
	return thalex.Login(thalex.NewKey("key", testutil.RSAKeys()[1]))
}

// loginCase is one dialect's login: a good and a bad hook, the login
// method, a private and a public topic, and the code of a refused login.
type loginCase struct {
	name     string
	server   func(t *testing.T) *exchangetest.Server
	proto    protocol.Protocol
	hook     client.OnConnect
	badHook  client.OnConnect
	login    string
	private  string
	public   string
	loginErr int
}

func loginCases() []loginCase {
	return []loginCase{
		{
			name: "thalex", server: thalexServer, proto: thalex.Protocol(thalex.WithNotices(false)),
			hook: thalexLogin(true), badHook: thalexLogin(false), login: "public/login",
			private: "account.orders", public: "ticker.BTC-PERPETUAL.raw",
			loginErr: 19,
		},
		{
			name: "deribit",
			server: func(t *testing.T) *exchangetest.Server {
				return newServer(t, deribit.Name, exchangetest.WithLogin(deribit.NewServerLogin("key", "secret")))
			},
			proto: deribit.Protocol(deribit.WithHeartbeat(0)),
			hook:  deribit.Login(deribit.NewKey("key", "secret")), badHook: deribit.Login(deribit.NewKey("key", "wrong")),
			login:   "public/auth",
			private: "user.orders.BTC-PERPETUAL.raw", public: "ticker.BTC-PERPETUAL.100ms",
			loginErr: 13009,
		},
	}
}

// Private channels need a login on every connection: the hook logs in
// first, then the private and public topics are restored.
func TestLoginHookRestoresPrivateChannels(t *testing.T) {
	for _, tc := range loginCases() {
		t.Run(tc.name, func(t *testing.T) {
			srv := tc.server(t)
			c := dial(t, srv, tc.proto, fastBackoff(), client.WithOnConnect(tc.hook))
			ctx := testutil.Context(t)
			sub, err := c.Subscribe(ctx, []string{tc.private, tc.public})
			require.NoError(t, err)
			drainEvents(c)

			srv.Stop()
			srv.ResetReceived()
			require.NoError(t, srv.Start())
			ev := waitEvent(t, c, client.Resubscribed)
			assert.Equal(t, 2, ev.Topics)
			require.NoError(t, srv.WaitSubscribers(ctx, tc.private, 1))
			require.NoError(t, srv.WaitSubscribers(ctx, tc.public, 1))

			// One login, then one frame per scope: public/subscribe and
			// private/subscribe, and nothing else.
			var methods []string
			for _, r := range srv.Received() {
				for _, m := range []string{tc.login, "public/subscribe", "private/subscribe"} {
					if strings.Contains(string(r.Data), `"`+m+`"`) {
						methods = append(methods, m)
					}
				}
			}
			assert.Equal(t, tc.login, methods[0], "the hook runs before anything is restored")
			assert.ElementsMatch(t, []string{tc.login, "public/subscribe", "private/subscribe"}, methods)
			assert.Len(t, srv.Received(), 3)

			for _, topic := range []string{tc.private, tc.public} {
				srv.Publish(topic, payload(tc.name, topic, 1))
				m := receive(t, sub)
				assert.Equal(t, topic, m.Topic)
				assert.True(t, m.Reconnected())
			}

			// Wrong credentials: Dial fails with the server's error.
			bad, err := client.Dial(ctx, srv.URL(), client.WithProtocol(tc.proto), client.WithOnConnect(tc.badHook))
			require.Nil(t, bad)
			var rpcErr *client.RPCError
			require.ErrorAs(t, err, &rpcErr)
			assert.Equal(t, tc.loginErr, rpcErr.Code)
		})
	}
}

// A login refused on a reconnect would be refused again: the client keeps
// the connection, restores the public topics and ends the subscriptions
// holding private ones with the server's error.
func TestRefusedLoginEndsOnlyPrivateSubscriptions(t *testing.T) {
	for _, tc := range loginCases() {
		t.Run(tc.name, func(t *testing.T) {
			srv := tc.server(t)
			var refuse atomic.Bool
			hook := func(ctx context.Context, c *client.Client) error {
				if refuse.Load() {
					return tc.badHook(ctx, c)
				}
				return tc.hook(ctx, c)
			}
			c := dial(t, srv, tc.proto, fastBackoff(), client.WithOnConnect(hook))
			ctx := testutil.Context(t)
			private, err := c.Subscribe(ctx, []string{tc.private, tc.public})
			require.NoError(t, err)
			public, err := c.Subscribe(ctx, []string{tc.public})
			require.NoError(t, err)
			drainEvents(c)

			refuse.Store(true)
			srv.Stop()
			srv.ResetReceived()
			require.NoError(t, srv.Start())
			ev := waitEvent(t, c, client.Resubscribed)
			assert.Equal(t, 1, ev.Topics, "only the public topic")
			assert.Equal(t, client.StateConnected, c.State())

			select {
			case err := <-private.Err():
				require.ErrorIs(t, err, client.ErrLoginRefused)
				var rpcErr *client.RPCError
				require.ErrorAs(t, err, &rpcErr)
				assert.Equal(t, tc.loginErr, rpcErr.Code)
			case <-ctx.Done():
				t.Fatal("the subscription holding a private topic did not end")
			}
			_, open := <-private.C()
			assert.False(t, open)

			srv.Publish(tc.public, payload(tc.name, tc.public, 1))
			m := receive(t, public)
			assert.Equal(t, tc.public, m.Topic)
			assert.True(t, m.Reconnected())
			for _, r := range srv.Received() {
				assert.NotContains(t, string(r.Data), "private/subscribe", "a private topic was restored")
			}
			assert.Zero(t, srv.Subscribers(tc.private))
		})
	}
}

var errLoginDown = errors.New("login service down")

// A failing on-connect hook drops the new connection and is retried with
// backoff; each failure is reported in a Reconnecting event until the
// login succeeds and the topics are restored.
func TestLoginHookFailingIsRetried(t *testing.T) {
	const failures = 3
	srv := thalexServer(t)
	var calls atomic.Int32
	login := thalexLogin(true)
	hook := func(ctx context.Context, c *client.Client) error {
		n := calls.Add(1)
		if n > 1 && n <= 1+failures { // the first connection logs in fine
			return errLoginDown
		}
		return login(ctx, c)
	}
	c := dial(t, srv, thalex.Protocol(thalex.WithNotices(false)), fastBackoff(), client.WithOnConnect(hook))
	ctx := testutil.Context(t)
	sub, err := c.Subscribe(ctx, []string{"account.orders"})
	require.NoError(t, err)
	drainEvents(c)
	require.NoError(t, srv.WaitConnections(ctx, 1))

	srv.DropConnections()
	evs := eventsUntil(t, c, client.Resubscribed)
	assert.Equal(t, []client.EventKind{client.Disconnected, client.Reconnecting, client.Connected, client.Resubscribed}, kindsOf(evs))
	var reported int
	for _, ev := range evs {
		if ev.Kind != client.Reconnecting {
			continue
		}
		if ev.Attempt == 1 {
			assert.NotErrorIs(t, ev.Err, errLoginDown, "the first attempt reports the lost connection")
			continue
		}
		require.ErrorIs(t, ev.Err, errLoginDown, "attempt %d", ev.Attempt)
		assert.Contains(t, ev.Err.Error(), "on-connect hook")
		reported++
	}
	assert.Equal(t, failures, reported, "every failed login is reported")
	assert.Equal(t, int32(2+failures), calls.Load())
	assert.Equal(t, client.StateConnected, c.State())

	require.NoError(t, srv.WaitSubscribers(ctx, "account.orders", 1))
	srv.Publish("account.orders", []byte(`{"n":1}`))
	assert.True(t, receive(t, sub).Reconnected())
}

// A connection is not handed out before its hook has run: a Subscribe
// made while the hook logs in waits for the connection, and so reaches the
// server authenticated (not refused for good).
func TestCallsWaitForTheHookOnReconnect(t *testing.T) {
	srv := thalexServer(t)
	var reconnecting atomic.Bool
	inHook, release := make(chan struct{}), make(chan struct{})
	login := thalexLogin(true)
	hook := func(ctx context.Context, c *client.Client) error {
		if reconnecting.Load() {
			close(inHook)
			<-release
		}
		return login(ctx, c)
	}
	c := dial(t, srv, thalex.Protocol(thalex.WithNotices(false)), client.WithOnConnect(hook), fastBackoff())
	ctx := testutil.Context(t)

	reconnecting.Store(true)
	srv.DropConnections()
	<-inHook
	type result struct {
		sub *client.Subscription
		err error
	}
	done := make(chan result, 1)
	go func() {
		sub, err := c.Subscribe(ctx, []string{"account.orders"})
		done <- result{sub, err}
	}()
	select {
	case r := <-done:
		t.Fatalf("Subscribe returned before the login: %v", r.err)
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	r := <-done
	require.NoError(t, r.err)
	require.NoError(t, r.sub.Unsubscribe(ctx))
}
