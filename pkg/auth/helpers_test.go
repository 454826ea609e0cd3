package auth_test

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/protocol"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// rsaKeys are two keys made once: making one takes a while under the
// race detector.
var rsaKeys = sync.OnceValue(func() [2]*rsa.PrivateKey {
	var keys [2]*rsa.PrivateKey
	for i := range keys {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			panic(err)
		}
		keys[i] = k
	}
	return keys
})

// pkcs1 and pkcs8 encode key as a PEM file of either kind.
func pkcs1(key *rsa.PrivateKey) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
}

func pkcs8(t *testing.T, key any) []byte {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	require.NoError(t, err)
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
}

func newServer(t *testing.T, d exchangetest.Dialect, opts ...exchangetest.Option) *exchangetest.Server {
	srv := exchangetest.NewServer(d, opts...)
	t.Cleanup(srv.Close)
	return srv
}

// fastBackoff reconnects within milliseconds.
var fastBackoff = client.WithBackoff(func() backoff.BackOff { return backoff.NewConstantBackOff(5 * time.Millisecond) })

func protocolOf(d exchangetest.Dialect) protocol.Protocol {
	if d == exchangetest.Deribit {
		return protocol.Deribit(protocol.WithHeartbeat(0))
	}
	return protocol.Thalex()
}

// dial connects to srv with login as the on-connect hook.
func dial(t *testing.T, srv *exchangetest.Server, login client.OnConnect, opts ...client.Option) (*client.Client, error) {
	opts = append([]client.Option{client.WithProtocol(protocolOf(srv.Dialect())), client.WithOnConnect(login), fastBackoff}, opts...)
	c, err := client.Dial(testutil.Context(t), srv.URL(), opts...)
	if err == nil {
		t.Cleanup(func() { _ = c.Close() })
	}
	return c, err
}

// privateTopic is a private channel of the server's dialect.
func privateTopic(srv *exchangetest.Server) string {
	if srv.Dialect() == exchangetest.Deribit {
		return "user.orders.any.any.raw"
	}
	return "account.orders"
}

// requireLoggedIn checks that c's connection is logged in: the server
// accepts a private channel on it.
func requireLoggedIn(t *testing.T, c *client.Client, srv *exchangetest.Server) {
	t.Helper()
	sub, err := c.Subscribe(testutil.Context(t), []string{privateTopic(srv)})
	require.NoError(t, err, "a private channel needs a login")
	require.NoError(t, sub.Unsubscribe(testutil.Context(t)))
}

// requireRefused checks that err is the server refusing a login with
// code and reason, and that it shows none of the secrets.
func requireRefused(t *testing.T, err error, code int, reason string, secrets ...string) {
	t.Helper()
	var rpcErr *client.RPCError
	require.ErrorAs(t, err, &rpcErr)
	assert.Equal(t, code, rpcErr.Code)
	assert.Contains(t, string(rpcErr.Data), reason)
	for _, s := range secrets {
		assert.NotContains(t, err.Error(), s)
	}
}

// grants lists the grant_type of every public/auth the server received.
func grants(t *testing.T, srv *exchangetest.Server) []string {
	t.Helper()
	var out []string
	for _, r := range srv.Received() {
		var req struct {
			Method string
			Params struct {
				GrantType string `json:"grant_type"`
			}
		}
		require.NoError(t, json.Unmarshal(r.Data, &req))
		if req.Method == "public/auth" {
			out = append(out, req.Params.GrantType)
		}
	}
	return out
}

// pemLine is the first line of a PEM file's body: a piece of the key
// that must never show.
func pemLine(p []byte) string {
	return strings.Split(string(p), "\n")[1]
}

var errNoEvent = errors.New("no such event within 10s")

// waitEvent returns the next event of kind.
func waitEvent(c *client.Client, kind client.EventKind) (client.Event, error) {
	timeout := time.After(10 * time.Second)
	for {
		select {
		case ev := <-c.Events():
			if ev.Kind == kind {
				return ev, nil
			}
		case <-timeout:
			return client.Event{}, errNoEvent
		}
	}
}
