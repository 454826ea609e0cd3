package exchangetest_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/clock"
	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/deribit"
	"github.com/wsfan/wsfan/pkg/exchangetest"
)

// t0 is when the fake clocks of these tests start; the signature below
// was made with openssl for this time:
//
//	printf '1700000000000\nabcd\n' | openssl dgst -sha256 -hmac secret
var t0 = time.UnixMilli(1_700_000_000_000)

const signature = "cd3d93a66ae53f454e10a72ea5160668033756df86970fc1f6ebb2878a28a0ea"

// auth sends public/auth with params and returns the response.
func auth(t *testing.T, ws *websocket.Conn, id int, params map[string]any) map[string]any {
	t.Helper()
	req, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "public/auth", "params": params})
	require.NoError(t, err)
	testutil.Send(t, ws, string(req))
	return testutil.RecvJSON(t, ws)
}

// subscribePrivate reports whether a private channel is accepted.
func subscribePrivate(t *testing.T, ws *websocket.Conn, id int) bool {
	t.Helper()
	testutil.Send(t, ws, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"private/subscribe","params":{"channels":["user.orders.any.any.raw"]}}`, id))
	return len(testutil.RecvJSON(t, ws)["result"].([]any)) == 1
}

func rpcError(code int, message string, reason string) map[string]any {
	e := map[string]any{"code": float64(code), "message": message}
	if reason != "" {
		e["data"] = map[string]any{"reason": reason}
	}
	return e
}

func TestDeribitSignatureLogin(t *testing.T) {
	clk := clock.NewFake(t0)
	srv := newServer(t, deribit.Name, exchangetest.WithLogin(deribit.NewServerLogin("id", "secret")), exchangetest.WithClock(clk.Now))
	sig := func(id string, ts time.Time, sig string) map[string]any {
		return map[string]any{"grant_type": "client_signature", "client_id": id, "timestamp": ts.UnixMilli(), "nonce": "abcd", "signature": sig}
	}
	ws := dial(t, srv)
	refused := []struct {
		name   string
		params map[string]any
		want   map[string]any
	}{
		{"wrong client id", sig("other", t0, signature), rpcError(13004, "invalid_credentials", "")},
		{"wrong signature", sig("id", t0, signature[1:]+"0"), rpcError(13009, "unauthorized", "invalid signature")},
		{"stale timestamp", sig("id", t0.Add(-31*time.Second), signature), rpcError(13009, "unauthorized", "timestamp expired")},
		{"clock ahead", sig("id", t0.Add(31*time.Second), signature), rpcError(13009, "unauthorized", "timestamp in the future: check the clock")},
		{"unknown grant", map[string]any{"grant_type": "password"}, rpcError(-32602, "invalid params", "")},
	}
	for i, tc := range refused {
		assert.Equal(t, tc.want, auth(t, ws, i+1, tc.params)["error"], tc.name)
	}
	assert.False(t, subscribePrivate(t, ws, 10))

	// A timestamp within the skew is fine, as long as the signature is of
	// that timestamp.
	clk.Advance(29 * time.Second)
	res := auth(t, ws, 11, sig("id", t0, signature))["result"].(map[string]any)
	assert.Equal(t, 900.0, res["expires_in"])
	assert.True(t, subscribePrivate(t, ws, 12))
}

func TestDeribitTokenExpiresAndRefreshes(t *testing.T) {
	clk := clock.NewFake(t0)
	login := deribit.NewServerLogin("id", "secret").WithTokenExpiry(10 * time.Second)
	srv := newServer(t, deribit.Name, exchangetest.WithLogin(login), exchangetest.WithClock(clk.Now))
	ws := dial(t, srv)
	res := auth(t, ws, 1, map[string]any{"grant_type": "client_credentials", "client_id": "id", "client_secret": "secret"})["result"].(map[string]any)
	assert.Equal(t, 10.0, res["expires_in"])
	assert.True(t, subscribePrivate(t, ws, 2))

	clk.Advance(10 * time.Second)
	assert.False(t, subscribePrivate(t, ws, 3), "the access token expired")

	refresh := res["refresh_token"]
	res = auth(t, ws, 4, map[string]any{"grant_type": "refresh_token", "refresh_token": refresh})["result"].(map[string]any)
	assert.True(t, subscribePrivate(t, ws, 5), "refreshed")
	assert.NotEqual(t, refresh, res["refresh_token"])
	assert.Equal(t, rpcError(13009, "unauthorized", "invalid or expired refresh token"),
		auth(t, ws, 6, map[string]any{"grant_type": "refresh_token", "refresh_token": refresh})["error"], "a refresh token is good once")

	// Refresh tokens belong to their connection.
	other := dial(t, srv)
	assert.Equal(t, rpcError(13009, "unauthorized", "invalid or expired refresh token"),
		auth(t, other, 1, map[string]any{"grant_type": "refresh_token", "refresh_token": res["refresh_token"]})["error"])

	login.RevokeTokens()
	assert.Equal(t, rpcError(13009, "unauthorized", "invalid or expired refresh token"),
		auth(t, ws, 7, map[string]any{"grant_type": "refresh_token", "refresh_token": res["refresh_token"]})["error"])
	assert.True(t, subscribePrivate(t, ws, 8), "a refused refresh keeps the token there is")
}
