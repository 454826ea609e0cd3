package thalex_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// Thalex's cancel-on-disconnect takes a connection silent for
// timeout_secs for dead and cancels its orders: the client refuses it
// while its pings are not at least twice as frequent, and makes it again,
// with the same timeout, on every new connection.
func TestCancelOnDisconnectIsTiedToThePingAndMadeAgain(t *testing.T) {
	srv := exchangetest.NewServer(thalex.Name)
	t.Cleanup(srv.Close)
	ctx := testutil.Context(t)

	slow, err := client.Dial(ctx, srv.URL(), client.WithProtocol(thalex.Protocol()), client.WithPing(15*time.Second, 3*time.Second))
	require.NoError(t, err)
	defer slow.Close()
	err = slow.Call(ctx, "private/set_cancel_on_disconnect", map[string]int{"timeout_secs": 10}, nil)
	require.Error(t, err, "a 15 s ping would let the connection go silent past the 10 s timeout")
	assert.Contains(t, err.Error(), "client.WithPing to 5s or less")
	assert.Zero(t, srv.CountReceived("private/set_cancel_on_disconnect"), "refused before it was sent")

	c, err := client.Dial(ctx, srv.URL(), client.WithProtocol(thalex.Protocol()))
	require.NoError(t, err)
	defer c.Close()
	var res struct {
		MessageRate int `json:"message_rate"`
	}
	require.NoError(t, c.Call(ctx, "private/set_cancel_on_disconnect", map[string]int{"timeout_secs": 10}, &res))
	assert.Equal(t, 50, res.MessageRate)
	srv.ResetReceived()
	srv.DropConnections()
	require.NoError(t, srv.WaitReceived(ctx, "private/set_cancel_on_disconnect", 1))
	for _, r := range srv.Received() {
		if strings.Contains(string(r.Data), "private/set_cancel_on_disconnect") {
			assert.JSONEq(t, `{"timeout_secs":10}`, string(paramsOf(t, r.Data)), "the same timeout on the new connection")
		}
	}
}

// paramsOf returns a request's params.
func paramsOf(t *testing.T, frame []byte) json.RawMessage {
	t.Helper()
	var req struct {
		Params json.RawMessage `json:"params"`
	}
	require.NoError(t, json.Unmarshal(frame, &req))
	return req.Params
}
