package deribit_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/clock"
	"github.com/wsfan/wsfan/internal/logintest"
	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/deribit"
	"github.com/wsfan/wsfan/pkg/exchangetest"
)

const (
	clientID = "client-id"
	secret   = "s3cr3t-do-not-print"
)

// The signatures were made with openssl, not with the code under test:
//
//	printf '1700000000000\nabcd\n' | openssl dgst -sha256 -hmac secret
//	printf '1700000000000\nabcd\nGET\n/api/v2/private/get_account_summary?currency=BTC\n\n' | openssl dgst -sha256 -hmac secret
func TestDeribitSign(t *testing.T) {
	key := deribit.NewKey("id", "secret")
	assert.Equal(t, "cd3d93a66ae53f454e10a72ea5160668033756df86970fc1f6ebb2878a28a0ea",
		key.Sign(1_700_000_000_000, "abcd", ""))
	assert.Equal(t, "f88924270327b2712094a9ac6dfbf32163a3bbd1d72082ca058dcf0b9d87637b",
		key.Sign(1_700_000_000_000, "abcd", "GET\n/api/v2/private/get_account_summary?currency=BTC\n\n"))
}

// deribitServer checks logins with login, or with the key's credentials
// when login is nil.
func deribitServer(t *testing.T, login *deribit.ServerLogin, opts ...exchangetest.Option) *exchangetest.Server {
	if login == nil {
		login = deribit.NewServerLogin(clientID, secret)
	}
	return logintest.NewServer(t, deribit.Name, append([]exchangetest.Option{exchangetest.WithLogin(login)}, opts...)...)
}

func TestDeribitLogsIn(t *testing.T) {
	for _, tc := range []struct {
		name  string
		opts  []deribit.LoginOption
		grant string
	}{
		{"signature", nil, "client_signature"},
		{"client credentials", []deribit.LoginOption{deribit.WithClientCredentials()}, "client_credentials"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := deribitServer(t, nil)
			c, err := logintest.Dial(t, srv, deribit.Protocol(deribit.WithHeartbeat(0)), deribit.Login(deribit.NewKey(clientID, secret), tc.opts...))
			require.NoError(t, err)
			logintest.RequireLoggedIn(t, c, privateTopic)
			assert.Equal(t, []string{tc.grant}, grants(t, srv))
			if tc.grant == "client_signature" {
				assert.NotContains(t, string(srv.Received()[0].Data), secret, "the secret never leaves the process")
			}
		})
	}
}

func TestDeribitLoginFails(t *testing.T) {
	srv := deribitServer(t, nil)
	now := time.Now()
	cases := []struct {
		name   string
		key    *deribit.Key
		opts   []deribit.LoginOption
		code   int
		reason string
	}{
		{"bad secret", deribit.NewKey(clientID, "wrong-"+secret), nil, 13009, "invalid signature"},
		{"bad secret sent", deribit.NewKey(clientID, "wrong-"+secret), []deribit.LoginOption{deribit.WithClientCredentials()}, 13004, ""},
		{"unknown client", deribit.NewKey("other", secret), nil, 13004, ""},
		{"expired signature", deribit.NewKey(clientID, secret), []deribit.LoginOption{deribit.WithClock(clock.NewFake(now.Add(-time.Minute)))}, 13009, "timestamp expired"},
		{"clock skew", deribit.NewKey(clientID, secret), []deribit.LoginOption{deribit.WithClock(clock.NewFake(now.Add(time.Minute)))}, 13009, "timestamp in the future"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := logintest.Dial(t, srv, deribit.Protocol(deribit.WithHeartbeat(0)), deribit.Login(tc.key, tc.opts...))
			assert.Nil(t, c)
			logintest.RequireRefused(t, err, tc.code, tc.reason, secret)
		})
	}
}

// refreshServer hands out tokens good for 10 simulated seconds, on clk.
func refreshServer(t *testing.T, clk *clock.Fake, login *deribit.ServerLogin) *exchangetest.Server {
	return deribitServer(t, login.WithTokenExpiry(10*time.Second), exchangetest.WithClock(clk.Now))
}

// nextRefresh lets simulated time run to the next refresh, then waits for
// the refresh to be answered and the one after it to be scheduled.
func nextRefresh(t *testing.T, clk *clock.Fake, srv *exchangetest.Server, auths int) {
	t.Helper()
	require.NoError(t, clk.WaitTimers(testutil.Context(t), 1), "a refresh is scheduled")
	require.True(t, clk.AdvanceToNext())
	require.NoError(t, srv.WaitReceived(testutil.Context(t), "public/auth", auths))
	require.NoError(t, clk.WaitTimers(testutil.Context(t), 1), "the next refresh is scheduled")
}

// A token is refreshed on its connection when four fifths of its
// lifetime have passed, again and again: the connection stays logged in
// long after the first token expired.
func TestDeribitRefreshesBeforeExpiry(t *testing.T) {
	clk := clock.NewFake(time.Now())
	start := clk.Now()
	srv := refreshServer(t, clk, deribit.NewServerLogin(clientID, secret))
	c, err := logintest.Dial(t, srv, deribit.Protocol(deribit.WithHeartbeat(0)), deribit.Login(deribit.NewKey(clientID, secret), deribit.WithClock(clk)))
	require.NoError(t, err)

	for i := range 5 {
		nextRefresh(t, clk, srv, i+2)
		assert.Equal(t, time.Duration(i+1)*8*time.Second, clk.Now().Sub(start), "refresh %d", i+1)
	}
	logintest.RequireLoggedIn(t, c, privateTopic)
	assert.Equal(t, []string{"client_signature", "refresh_token", "refresh_token", "refresh_token", "refresh_token", "refresh_token"}, grants(t, srv))
	assert.Equal(t, 1, srv.Connections())
}

// A refused refresh authenticates again on the same connection.
func TestDeribitFailedRefreshAuthenticatesAgain(t *testing.T) {
	clk := clock.NewFake(time.Now())
	login := deribit.NewServerLogin(clientID, secret)
	srv := refreshServer(t, clk, login)
	c, err := logintest.Dial(t, srv, deribit.Protocol(deribit.WithHeartbeat(0)), deribit.Login(deribit.NewKey(clientID, secret), deribit.WithClock(clk)))
	require.NoError(t, err)

	login.RevokeTokens()
	nextRefresh(t, clk, srv, 3)
	assert.Equal(t, []string{"client_signature", "refresh_token", "client_signature"}, grants(t, srv))
	nextRefresh(t, clk, srv, 4)
	assert.Equal(t, "refresh_token", grants(t, srv)[3], "the new refresh token works")
	logintest.RequireLoggedIn(t, c, privateTopic)
	assert.Equal(t, 1, srv.Connections())
}

// When authenticating again fails too, the connection is dropped and
// replaced; the error says why, without the secret, and the replacement
// serves public topics only.
func TestDeribitFailedReauthenticationDropsTheConnection(t *testing.T) {
	// The client's clock runs apart from the server's: once it is past
	// the clock skew, its signatures are refused.
	serverClock, clientClock := clock.NewFake(time.Now()), clock.NewFake(time.Now())
	login := deribit.NewServerLogin(clientID, secret).WithTokenExpiry(time.Hour)
	srv := deribitServer(t, login, exchangetest.WithClock(serverClock.Now))
	c, err := logintest.Dial(t, srv, deribit.Protocol(deribit.WithHeartbeat(0)), deribit.Login(deribit.NewKey(clientID, secret), deribit.WithClock(clientClock)))
	require.NoError(t, err)

	login.RevokeTokens()
	require.NoError(t, clientClock.WaitTimers(testutil.Context(t), 1))
	clientClock.Advance(48 * time.Minute)
	ev, err := logintest.WaitEvent(c, client.Disconnected)
	require.NoError(t, err)
	logintest.RequireRefused(t, ev.Err, 13009, "timestamp in the future", secret)
	msg := ev.Err.Error()
	assert.Contains(t, msg, "deribit: token refresh failed (wsfan: login refused: call public/auth: rpc error 13009: unauthorized")
	assert.Contains(t, msg, "and so did authenticating again")
	require.ErrorIs(t, ev.Err, client.ErrLoginRefused)

	// The new connection's login is refused the same way: retrying would
	// not help, so the client keeps the connection for public topics.
	_, err = logintest.WaitEvent(c, client.Connected)
	require.NoError(t, err)
	assert.Equal(t, client.StateConnected, c.State())
	require.NoError(t, c.Close())
}

// A key prints as its client id, however it is formatted.
func TestDeribitKeyNeverPrintsTheSecret(t *testing.T) {
	key := deribit.NewKey(clientID, secret)
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%d"} {
		for _, v := range []any{key, *key, struct{ K *deribit.Key }{key}} {
			out := fmt.Sprintf(verb, v)
			assert.Contains(t, out, "deribit.Key("+clientID+")", verb)
			assert.False(t, strings.Contains(out, secret), "%s printed %s", verb, out)
		}
	}
}

func BenchmarkDeribitSign(b *testing.B) {
	key := deribit.NewKey(clientID, secret)
	ts := time.Now().UnixMilli()
	b.ReportAllocs()
	for b.Loop() {
		_ = key.Sign(ts, "0123456789abcdef01234567", "")
	}
}

// privateTopic is a Deribit private channel: subscribing it needs a login.
const privateTopic = "user.orders.any.any.raw"
