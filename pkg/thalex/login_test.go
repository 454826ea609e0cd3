package thalex_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/pem"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/internal/clock"
	"github.com/wsfan/wsfan/internal/logintest"
	"github.com/wsfan/wsfan/internal/testutil"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/thalex"
)

func TestParseKeyReadsPKCS1AndPKCS8(t *testing.T) {
	key := testutil.RSAKeys()[0]
	now := time.Unix(1_700_000_000, 0)
	for name, p := range map[string][]byte{"PKCS#1": pkcs1(key), "PKCS#8": pkcs8(t, key)} {
		k, err := thalex.ParseKey("kid-1", p)
		require.NoError(t, err, name)
		assert.Equal(t, "kid-1", k.ID())

		token, err := k.Token(now)
		require.NoError(t, err)
		parsed, err := jwt.Parse(token, func(*jwt.Token) (any, error) { return &key.PublicKey, nil },
			jwt.WithValidMethods([]string{"RS512"}), jwt.WithoutClaimsValidation())
		require.NoError(t, err, "%s: signed with the key", name)
		assert.Equal(t, map[string]any{"alg": "RS512", "kid": "kid-1", "typ": "JWT"}, parsed.Header)
		assert.Equal(t, jwt.MapClaims{"iat": float64(now.Unix())}, parsed.Claims)
	}
}

func TestParseKeyRefusesOtherKeys(t *testing.T) {
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	good := pkcs1(testutil.RSAKeys()[0])
	block, _ := pem.Decode(good)
	corrupt := pem.EncodeToMemory(&pem.Block{Type: block.Type, Bytes: block.Bytes[:len(block.Bytes)/2]})
	cases := []struct {
		name string
		pem  []byte
		want string
	}{
		{"no PEM", []byte("kid-1"), "thalex: key: no PEM block found"},
		{"EC key", pkcs8(t, ec), "thalex: key: a *ecdsa.PrivateKey, not an RSA key"},
		{"public key", pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: block.Bytes}), `thalex: key: PEM block "PUBLIC KEY", want "RSA PRIVATE KEY" or "PRIVATE KEY"`},
		{"corrupt", corrupt, "thalex: key: "},
	}
	for _, tc := range cases {
		k, err := thalex.ParseKey("kid-1", tc.pem)
		assert.Nil(t, k, tc.name)
		require.ErrorContains(t, err, tc.want, tc.name)
		assert.NotContains(t, err.Error(), pemLine(good)[:16], tc.name)
	}
}

// thalexServer checks logins against the first test key, registered
// under "kid-1" for accounts A1 (its default) and A2.
func thalexServer(t *testing.T) *exchangetest.Server {
	return logintest.NewServer(t, thalex.Name, exchangetest.WithLogin(thalex.NewServerLogin(thalex.ServerKey{ID: "kid-1", Public: &testutil.RSAKeys()[0].PublicKey, Accounts: []string{"A1", "A2"}})))
}

func TestThalexLogsInOnEveryConnection(t *testing.T) {
	srv := thalexServer(t)
	c, err := logintest.Dial(t, srv, thalex.Protocol(), thalex.Login(thalex.NewKey("kid-1", testutil.RSAKeys()[0])))
	require.NoError(t, err)
	logintest.RequireLoggedIn(t, c, privateTopic)

	srv.DropConnections()
	_, err = logintest.WaitEvent(c, client.Resubscribed)
	require.NoError(t, err)
	logintest.RequireLoggedIn(t, c, privateTopic)
	assert.Equal(t, 2, srv.CountReceived("public/login"))
}

func TestThalexSelectsTheAccount(t *testing.T) {
	srv := thalexServer(t)
	key := thalex.NewKey("kid-1", testutil.RSAKeys()[0])
	c, err := logintest.Dial(t, srv, thalex.Protocol(), thalex.Login(key, thalex.WithAccount("A2")))
	require.NoError(t, err)
	logintest.RequireLoggedIn(t, c, privateTopic)
	var login string
	for _, r := range srv.Received() {
		if strings.Contains(string(r.Data), `"public/login"`) {
			login = string(r.Data)
		}
	}
	assert.Contains(t, login, `"account":"A2"`)

	_, err = logintest.Dial(t, srv, thalex.Protocol(), thalex.Login(key, thalex.WithAccount("A3")))
	logintest.RequireRefused(t, err, 19, "account not accessible with this key")
}

func TestThalexLoginFails(t *testing.T) {
	srv := thalexServer(t)
	now := time.Now()
	cases := []struct {
		name   string
		key    *thalex.Key
		clock  time.Time
		reason string
	}{
		{"bad key", thalex.NewKey("kid-1", testutil.RSAKeys()[1]), now, "invalid signature"},
		{"unknown key id", thalex.NewKey("kid-2", testutil.RSAKeys()[0]), now, "unknown key id"},
		{"expired token", thalex.NewKey("kid-1", testutil.RSAKeys()[0]), now.Add(-time.Minute), "token expired"},
		{"clock skew", thalex.NewKey("kid-1", testutil.RSAKeys()[0]), now.Add(time.Minute), "token issued in the future"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := logintest.Dial(t, srv, thalex.Protocol(), thalex.Login(tc.key, thalex.WithClock(clock.NewFake(tc.clock))))
			assert.Nil(t, c)
			logintest.RequireRefused(t, err, 19, tc.reason, pemLine(pkcs1(testutil.RSAKeys()[0])), pemLine(pkcs1(testutil.RSAKeys()[1])), "eyJ")
		})
	}
}

// A key prints as its id, however it is formatted.
func TestThalexKeyNeverPrintsTheKey(t *testing.T) {
	key := thalex.NewKey("kid-1", testutil.RSAKeys()[0])
	secret := testutil.RSAKeys()[0].D.String()[:20]
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%d"} {
		for _, v := range []any{key, *key, struct{ K *thalex.Key }{key}} {
			out := fmt.Sprintf(verb, v)
			assert.Contains(t, out, "thalex.Key(kid-1)", verb)
			assert.False(t, strings.Contains(out, secret) || strings.Contains(out, "PRIVATE"), "%s printed %s", verb, out)
		}
	}
}

func BenchmarkThalexToken(b *testing.B) {
	key := thalex.NewKey("kid-1", testutil.RSAKeys()[0])
	now := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := key.Token(now); err != nil {
			b.Fatal(err)
		}
	}
}

// privateTopic is a Thalex private channel: subscribing it needs a login.
const privateTopic = "account.orders"
