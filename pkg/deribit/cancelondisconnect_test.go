package deribit_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/deribit"
	"github.com/wsfan/wsfan/pkg/exchangetest"
)

// methodsOn lists the methods connection conn sent, in order.
func methodsOn(t *testing.T, srv *exchangetest.Server, conn int) []string {
	t.Helper()
	var out []string
	for _, r := range srv.Received() {
		var req struct {
			Method string `json:"method"`
		}
		if r.Conn == conn && json.Unmarshal(r.Data, &req) == nil {
			out = append(out, req.Method)
		}
	}
	return out
}

// reconnect drops the client's connection and waits until the next one
// is handed out.
func reconnect(t *testing.T, ctx context.Context, srv *exchangetest.Server, c *client.Client) {
	t.Helper()
	srv.DropConnections()
	lost := false
	for {
		select {
		case ev := <-c.Events():
			lost = lost || ev.Kind == client.Disconnected
			if lost && ev.Kind == client.Connected {
				return
			}
		case <-ctx.Done():
			t.Fatal("no new connection")
		}
	}
}

// Cancel-on-disconnect of the connection's scope (Deribit's default) is
// lost with the connection: the client enables it again on every new
// connection before handing it out, so the program's next call comes
// after it. Disabled, it is not made again; of the account's scope,
// Deribit keeps it itself.
func TestCancelOnDisconnectIsEnabledOnEveryConnection(t *testing.T) {
	srv := exchangetest.NewServer(deribit.Name)
	t.Cleanup(srv.Close)
	c := dialDeribit(t, srv)
	ctx := testutil.Context(t)
	var ok string
	require.NoError(t, c.Call(ctx, "private/enable_cancel_on_disconnect", nil, &ok))
	assert.Equal(t, "ok", ok)

	reconnect(t, ctx, srv, c)
	require.NoError(t, c.Call(ctx, "public/get_time", nil, nil))
	assert.Equal(t, []string{"private/enable_cancel_on_disconnect", "public/get_time"}, methodsOn(t, srv, 2),
		"enabled again before the connection was handed out")

	require.NoError(t, c.Call(ctx, "private/disable_cancel_on_disconnect", nil, nil))
	require.NoError(t, c.Call(ctx, "private/enable_cancel_on_disconnect", map[string]string{"scope": "account"}, nil))
	reconnect(t, ctx, srv, c)
	require.NoError(t, c.Call(ctx, "public/get_time", nil, nil))
	assert.Equal(t, []string{"public/get_time"}, methodsOn(t, srv, 3), "disabled, or kept by the account: not made again")
}
