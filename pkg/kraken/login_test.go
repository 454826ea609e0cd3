package kraken_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/kraken"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// secret is a test key's private key, Base64 as Kraken shows one.
var secret = base64.StdEncoding.EncodeToString([]byte("a test key's private key"))

// venueWithTokens starts a test exchange whose private requests need a
// token its ServerLogin granted, and that login's REST endpoint on
// loopback.
func venueWithTokens(t *testing.T) (*exchangetest.Server, *kraken.ServerLogin, string) {
	t.Helper()
	login := kraken.NewServerLogin("key-1", secret)
	rest := httptest.NewServer(login)
	t.Cleanup(rest.Close)
	srv := exchangetest.NewServer(kraken.Name, exchangetest.WithLogin(login))
	t.Cleanup(srv.Close)
	return srv, login, rest.URL
}

// dialWithLogin dials srv logged in with key-1 through restURL.
func dialWithLogin(ctx context.Context, t *testing.T, srv *exchangetest.Server, restURL string, opts ...kraken.LoginOption) *client.Client {
	t.Helper()
	key, err := kraken.NewKey("key-1", secret)
	require.NoError(t, err)
	opts = append([]kraken.LoginOption{kraken.WithTokenURL(restURL)}, opts...)
	c, err := client.Dial(ctx, srv.URL(), client.WithProtocol(kraken.Protocol()), client.WithOnConnect(kraken.Login(key, opts...)))
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// tokensOf returns the token of each frame srv received with method
// (and a "token" in its params), in order.
func tokensOf(t *testing.T, srv *exchangetest.Server, method string) []string {
	t.Helper()
	var out []string
	for _, r := range srv.Received() {
		var f struct {
			Method string `json:"method"`
			Params struct {
				Token string `json:"token"`
			} `json:"params"`
		}
		if json.Unmarshal(r.Data, &f) == nil && f.Method == method && f.Params.Token != "" {
			out = append(out, f.Params.Token)
		}
	}
	return out
}

// A private channel is subscribed with the token Login fetched over
// REST for its connection, and after a reconnect with a new token the
// next connection fetched: the executions it publishes arrive on both.
func TestLoginSubscribesPrivateChannelsWithEachConnectionsToken(t *testing.T) {
	srv, login, restURL := venueWithTokens(t)
	ctx := testutil.Context(t)
	c := dialWithLogin(ctx, t, srv, restURL)
	sub, err := c.Subscribe(ctx, []string{"executions"})
	require.NoError(t, err)
	data := []byte(`[{"order_id":"OK4GJX-KSTLS-7DZZO5","exec_type":"new","timestamp":"2023-09-22T10:33:05.709993Z"}]`)
	require.Equal(t, 1, srv.Publish("executions", data))
	assert.JSONEq(t, string(data), string(recv(ctx, t, sub).Data))
	assert.Equal(t, 1, login.Grants())

	drainEvents(c)
	srv.DropConnections()
	awaitConnected(ctx, t, c)
	require.Equal(t, 1, srv.Publish("executions", data))
	assert.JSONEq(t, string(data), string(recv(ctx, t, sub).Data))
	assert.Equal(t, 2, login.Grants(), "a token for each connection")
	toks := tokensOf(t, srv, "subscribe")
	require.Len(t, toks, 2)
	assert.NotEqual(t, toks[0], toks[1], "the second connection subscribed with its own token")
}

// Without Login, a private channel is refused before it is sent, naming
// kraken.Login; a key the REST endpoint refuses fails Dial as a refused
// login, with Kraken's error text.
func TestPrivateChannelNeedsLogin(t *testing.T) {
	srv, _, restURL := venueWithTokens(t)
	ctx := testutil.Context(t)
	c, err := client.Dial(ctx, srv.URL(), client.WithProtocol(kraken.Protocol()))
	require.NoError(t, err)
	defer c.Close()
	_, err = c.Subscribe(ctx, []string{"executions"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "kraken.Login")
	assert.Zero(t, srv.CountReceived("subscribe"))

	wrong, err := kraken.NewKey("key-2", secret)
	require.NoError(t, err)
	_, err = client.Dial(ctx, srv.URL(), client.WithProtocol(kraken.Protocol()),
		client.WithOnConnect(kraken.Login(wrong, kraken.WithTokenURL(restURL))))
	require.ErrorIs(t, err, client.ErrLoginRefused)
	assert.Contains(t, err.Error(), "EAPI:Invalid key")
}

// add_order carries the connection's token without the program writing
// it, and an order whose connection is lost before its answer fails
// with ErrConnectionLost and is never sent again on the next
// connection; nor is cancel_order.
func TestOrdersCarryTheTokenAndAreNeverMadeAgain(t *testing.T) {
	srv, _, restURL := venueWithTokens(t)
	srv.Handle("add_order", func(json.RawMessage) (any, *protocol.Error) {
		return json.RawMessage(`{"order_id":"AA5JGQ-SBMRC-SCJ7J7"}`), nil
	})
	srv.Handle("cancel_order", func(json.RawMessage) (any, *protocol.Error) {
		return json.RawMessage(`{"order_id":"AA5JGQ-SBMRC-SCJ7J7"}`), nil
	})
	ctx := testutil.Context(t)
	c := dialWithLogin(ctx, t, srv, restURL)
	order := json.RawMessage(`{"order_type":"limit","side":"buy","limit_price":26500.4,"order_qty":1.2,"symbol":"BTC/USD"}`)
	var res struct {
		OrderID string `json:"order_id"`
	}
	require.NoError(t, c.Call(ctx, "add_order", order, &res))
	assert.Equal(t, "AA5JGQ-SBMRC-SCJ7J7", res.OrderID)
	require.Len(t, tokensOf(t, srv, "add_order"), 1, "the order carried a token")

	for _, method := range []string{"add_order", "cancel_order"} {
		srv.SetResponseDelay(time.Hour)
		before := srv.CountReceived(method)
		done := make(chan error, 1)
		go func() { done <- c.Call(ctx, method, json.RawMessage(`{"order_id":["AA5JGQ-SBMRC-SCJ7J7"]}`), nil) }()
		require.NoError(t, srv.WaitReceived(ctx, method, before+1))
		drainEvents(c)
		srv.DropConnections()
		err := <-done
		require.ErrorIs(t, err, client.ErrConnectionLost, "%s is never made again", method)
		srv.SetResponseDelay(0)
		awaitConnected(ctx, t, c)
		require.NoError(t, c.Call(ctx, "ping", nil, nil), "the next connection serves")
		assert.Equal(t, before+1, srv.CountReceived(method), "%s sent once", method)
	}
}

// recv returns sub's next message.
func recv(ctx context.Context, t *testing.T, sub *client.Subscription) client.Message {
	t.Helper()
	select {
	case m := <-sub.C():
		return m
	case <-ctx.Done():
		t.Fatal("no message")
		return client.Message{}
	}
}

// drainEvents forgets the events c has told so far.
func drainEvents(c *client.Client) {
	for {
		select {
		case <-c.Events():
		default:
			return
		}
	}
}

// awaitConnected waits for c's next Connected event.
func awaitConnected(ctx context.Context, t *testing.T, c *client.Client) {
	t.Helper()
	for {
		select {
		case ev := <-c.Events():
			if ev.Kind == client.Connected {
				return
			}
		case <-ctx.Done():
			t.Fatal("no new connection")
		}
	}
}

// A program's own token is left as it wrote it.
func TestAnOrdersOwnTokenIsKept(t *testing.T) {
	srv, _, restURL := venueWithTokens(t)
	ctx := testutil.Context(t)
	c := dialWithLogin(ctx, t, srv, restURL)
	err := c.Call(ctx, "add_order", json.RawMessage(`{"symbol":"BTC/USD","token":"mine"}`), nil)
	require.Error(t, err, "a token the venue never granted")
	var found bool
	for _, r := range srv.Received() {
		found = found || bytes.Contains(r.Data, []byte(`"params":{"symbol":"BTC/USD","token":"mine"}`))
	}
	assert.True(t, found, "the params as the program wrote them")
}

// A refusal is Kraken's error text alone, with no code or message
// member, and the client reads it as an RPCError of that text: an
// order's, and a subscribe's naming its symbol.
func TestRefusalsAreKrakensErrorText(t *testing.T) {
	srv, _, restURL := venueWithTokens(t)
	srv.Handle("add_order", func(json.RawMessage) (any, *protocol.Error) {
		return nil, &protocol.Error{Code: protocol.CodeInvalidParams, Message: "EOrder:Insufficient funds"}
	})
	ctx := testutil.Context(t)
	c := dialWithLogin(ctx, t, srv, restURL)
	err := c.Call(ctx, "add_order", json.RawMessage(`{"symbol":"BTC/USD"}`), nil)
	var rpcErr *client.RPCError
	require.ErrorAs(t, err, &rpcErr)
	assert.Equal(t, "EOrder:Insufficient funds", rpcErr.Message)
	assert.Zero(t, rpcErr.Code)

	srv.SetRefused("ticker:BTC/US")
	_, err = c.Subscribe(ctx, []string{"ticker:BTC/US"})
	require.ErrorAs(t, err, &rpcErr)
	assert.Contains(t, rpcErr.Message, "Currency pair not supported")
	assert.NotContains(t, err.Error(), "malformed")
}
