// Package logintest holds what the login tests of the exchange packages
// share: dialing a test exchange with a login hook, and checking that a
// connection is logged in or that a login was refused without showing a
// secret.
package logintest

import (
	"errors"
	"testing"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// FastBackoff reconnects within milliseconds.
var FastBackoff = client.WithBackoff(func() backoff.BackOff { return backoff.NewConstantBackOff(5 * time.Millisecond) })

// NewServer starts a test exchange closed at the end of the test.
func NewServer(t *testing.T, d exchangetest.Dialect, opts ...exchangetest.Option) *exchangetest.Server {
	t.Helper()
	srv := exchangetest.NewServer(d, opts...)
	t.Cleanup(srv.Close)
	return srv
}

// Dial connects to srv speaking p with login as the on-connect hook; the
// client is closed at the end of the test.
func Dial(t *testing.T, srv *exchangetest.Server, p protocol.Protocol, login client.OnConnect, opts ...client.Option) (*client.Client, error) {
	t.Helper()
	opts = append([]client.Option{client.WithProtocol(p), client.WithOnConnect(login), FastBackoff}, opts...)
	c, err := client.Dial(testutil.Context(t), srv.URL(), opts...)
	if err == nil {
		t.Cleanup(func() { _ = c.Close() })
	}
	return c, err
}

// RequireLoggedIn checks that c's connection is logged in: the server
// accepts the private channel on it.
func RequireLoggedIn(t *testing.T, c *client.Client, private string) {
	t.Helper()
	sub, err := c.Subscribe(testutil.Context(t), []string{private})
	require.NoError(t, err, "a private channel needs a login")
	require.NoError(t, sub.Unsubscribe(testutil.Context(t)))
}

// RequireRefused checks that err is the server refusing a login with code
// and reason, and that it shows none of the secrets.
func RequireRefused(t *testing.T, err error, code int, reason string, secrets ...string) {
	t.Helper()
	var rpcErr *client.RPCError
	require.ErrorAs(t, err, &rpcErr)
	assert.Equal(t, code, rpcErr.Code)
	assert.Contains(t, string(rpcErr.Data), reason)
	for _, s := range secrets {
		assert.NotContains(t, err.Error(), s)
	}
}

// ErrNoEvent is WaitEvent's error when no such event comes.
var ErrNoEvent = errors.New("no such event within 10s")

// WaitEvent returns c's next event of kind.
func WaitEvent(c *client.Client, kind client.EventKind) (client.Event, error) {
	timeout := time.After(10 * time.Second)
	for {
		select {
		case ev := <-c.Events():
			if ev.Kind == kind {
				return ev, nil
			}
		case <-timeout:
			return client.Event{}, ErrNoEvent
		}
	}
}
