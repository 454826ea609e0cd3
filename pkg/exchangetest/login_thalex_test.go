package exchangetest_test

import (
	"crypto/x509"
	"encoding/json"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// thalexToken signs a login token the way Thalex wants it, or with
// whatever the test changes.
func thalexToken(t *testing.T, method jwt.SigningMethod, key any, kid string, claims jwt.MapClaims) string {
	t.Helper()
	tok := jwt.NewWithClaims(method, claims)
	tok.Header["kid"] = kid
	s, err := tok.SignedString(key)
	require.NoError(t, err)
	return s
}

// login sends public/login and returns the response.
func login(t *testing.T, ws *websocket.Conn, id int, params map[string]string) map[string]any {
	t.Helper()
	p, err := json.Marshal(params)
	require.NoError(t, err)
	req, err := json.Marshal(map[string]any{"id": id, "method": "public/login", "params": json.RawMessage(p)})
	require.NoError(t, err)
	testutil.Send(t, ws, string(req))
	return testutil.RecvJSON(t, ws)
}

func TestThalexLoginVerifiesTheToken(t *testing.T) {
	keys := testutil.RSAKeys()
	srv := newServer(t, thalex.Name, exchangetest.WithLogin(thalex.NewServerLogin(thalex.ServerKey{ID: "kid-1", Public: &keys[0].PublicKey, Accounts: []string{"A1", "A2"}})))
	now := time.Now()
	good := func() string {
		return thalexToken(t, jwt.SigningMethodRS512, keys[0], "kid-1", jwt.MapClaims{"iat": now.Unix()})
	}
	refused := []struct {
		name, token, account, reason string
	}{
		{name: "unknown key id", token: thalexToken(t, jwt.SigningMethodRS512, keys[0], "kid-2", jwt.MapClaims{"iat": now.Unix()}), reason: "unknown key id"},
		{name: "another key", token: thalexToken(t, jwt.SigningMethodRS512, keys[1], "kid-1", jwt.MapClaims{"iat": now.Unix()}), reason: "invalid signature"},
		{name: "RS256", token: thalexToken(t, jwt.SigningMethodRS256, keys[0], "kid-1", jwt.MapClaims{"iat": now.Unix()}), reason: "signing method RS256, want RS512"},
		{name: "HS512 keyed with the public key", token: thalexToken(t, jwt.SigningMethodHS512, x509.MarshalPKCS1PublicKey(&keys[0].PublicKey), "kid-1", jwt.MapClaims{"iat": now.Unix()}), reason: "signing method HS512, want RS512"},
		{name: "none", token: thalexToken(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, "kid-1", jwt.MapClaims{"iat": now.Unix()}), reason: "signing method none, want RS512"},
		{name: "expired", token: thalexToken(t, jwt.SigningMethodRS512, keys[0], "kid-1", jwt.MapClaims{"iat": now.Add(-time.Minute).Unix()}), reason: "token expired"},
		{name: "clock ahead", token: thalexToken(t, jwt.SigningMethodRS512, keys[0], "kid-1", jwt.MapClaims{"iat": now.Add(time.Minute).Unix()}), reason: "token issued in the future: check the clock"},
		{name: "no iat", token: thalexToken(t, jwt.SigningMethodRS512, keys[0], "kid-1", jwt.MapClaims{}), reason: "token has no iat"},
		{name: "garbage", token: "not.a.jwt", reason: "malformed token"},
		{name: "foreign account", token: good(), account: "A3", reason: "account not accessible with this key"},
	}
	ws := dial(t, srv)
	for i, tc := range refused {
		res := login(t, ws, i+1, map[string]string{"token": tc.token, "account": tc.account})
		assert.Equal(t, map[string]any{"code": 19.0, "message": "authentication failed", "data": tc.reason}, res["error"], tc.name)
	}
	// Refused logins leave the connection logged out.
	testutil.Send(t, ws, `{"id":100,"method":"private/subscribe","params":{"channels":["account.orders"]}}`)
	require.EqualValues(t, `{"id":100,"result":[]}`, testutil.Recv(t, ws))

	res := login(t, ws, 101, map[string]string{"token": good()})
	assert.Equal(t, map[string]any{"account_number": "A1"}, res["result"], "the first account is the default")
	res = login(t, ws, 102, map[string]string{"token": good(), "account": "A2"})
	assert.Equal(t, map[string]any{"account_number": "A2"}, res["result"])
	testutil.Send(t, ws, `{"id":103,"method":"private/subscribe","params":{"channels":["account.orders"]}}`)
	require.EqualValues(t, `{"id":103,"result":["account.orders"]}`, testutil.Recv(t, ws))
}

// Without a registered key any login goes through.
func TestThalexLoginUnchecked(t *testing.T) {
	srv := newServer(t, thalex.Name)
	ws := dial(t, srv)
	res := login(t, ws, 1, map[string]string{"token": "anything"})
	assert.Equal(t, map[string]any{"account_number": "A000001"}, res["result"])
	testutil.Send(t, ws, `{"id":2,"method":"public/login","params":{}}`)
	require.EqualValues(t, `{"id":2,"error":{"code":-32602,"message":"invalid params"}}`, testutil.Recv(t, ws))
}
