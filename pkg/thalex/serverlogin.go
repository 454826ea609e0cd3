package thalex

import (
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/wsfan/wsfan/pkg/protocol"
)

// codeAuthFailed is Thalex's error for a refused login, "authentication
// failed".
const codeAuthFailed = 19

// defaultAccount is the account a key selects when it names none.
const defaultAccount = "A000001"

// ServerKey is an API key as Thalex's servers hold it: its id (the
// tokens' "kid"), its public half, and the account numbers it may select
// with the login's "account" param, the first being the one selected
// without it (A000001 when none are given).
type ServerKey struct {
	ID       string         // the key id a login token names (kid)
	Public   *rsa.PublicKey // the public half of the key, which checks the token's signature
	Accounts []string       // the accounts the key may act for
}

// ServerLogin is the server half of Thalex's login, public/login: it
// wants a JWT signed RS512 by a registered key, named by its "kid", with
// an "iat" within the clock skew of the server's clock. Without keys it
// accepts any token. A refused login gets error 19, "authentication
// failed", with the reason in its data. A login lasts as long as its
// connection. It is safe for concurrent use.
type ServerLogin struct {
	keys map[string]ServerKey // nil: any token
	skew time.Duration
}

// NewServerLogin returns the login checking tokens against keys (any
// token when there are none), with a clock skew of 30s.
func NewServerLogin(keys ...ServerKey) *ServerLogin {
	l := &ServerLogin{skew: 30 * time.Second}
	for _, k := range keys {
		if len(k.Accounts) == 0 {
			k.Accounts = []string{defaultAccount}
		}
		k.Accounts = slices.Clone(k.Accounts)
		if l.keys == nil {
			l.keys = make(map[string]ServerKey)
		}
		l.keys[k.ID] = k
	}
	return l
}

// WithClockSkew sets how far a token's iat may be from the server's
// clock: an older token is refused as expired, a later one as issued in
// the future. Default: 30s.
func (l *ServerLogin) WithClockSkew(d time.Duration) *ServerLogin {
	l.skew = d
	return l
}

// Method is "public/login".
func (l *ServerLogin) Method() string { return "public/login" }

// Authenticate checks a public/login.
func (l *ServerLogin) Authenticate(_ int, params json.RawMessage, now time.Time) (any, time.Duration, *protocol.Error) {
	var p struct {
		Token   string `json:"token"`
		Account string `json:"account"`
	}
	if len(params) == 0 || json.Unmarshal(params, &p) != nil || p.Token == "" {
		return nil, 0, &protocol.Error{Code: protocol.CodeInvalidParams, Message: "invalid params"}
	}
	account := p.Account
	if l.keys != nil {
		key, reason := l.verify(p.Token, now)
		if reason != "" {
			return nil, 0, refused(reason)
		}
		switch {
		case account == "":
			account = key.Accounts[0]
		case !slices.Contains(key.Accounts, account):
			return nil, 0, refused("account not accessible with this key")
		}
	} else if account == "" {
		account = defaultAccount
	}
	return map[string]string{"account_number": account}, 0, nil
}

func refused(reason string) *protocol.Error {
	return protocol.NewError(codeAuthFailed, "authentication failed", reason)
}

// refusal is why a token is refused.
type refusal string

func (r refusal) Error() string { return string(r) }

// verify checks a token's signing method, key, signature and age,
// returning the key that signed it or why it is refused.
func (l *ServerLogin) verify(token string, now time.Time) (ServerKey, string) {
	var key ServerKey
	parsed, err := jwt.Parse(token, func(t *jwt.Token) (any, error) {
		// Checked before any key is used, so no other method (HS512
		// keyed with the public key, "none") is ever tried.
		if t.Method != jwt.SigningMethodRS512 {
			return nil, refusal(fmt.Sprintf("signing method %v, want RS512", t.Header["alg"]))
		}
		kid, _ := t.Header["kid"].(string)
		k, ok := l.keys[kid]
		if !ok {
			return nil, refusal("unknown key id")
		}
		key = k
		return k.Public, nil
	}, jwt.WithoutClaimsValidation())
	var r refusal
	switch {
	case errors.As(err, &r):
		return key, string(r)
	case errors.Is(err, jwt.ErrTokenSignatureInvalid):
		return key, "invalid signature"
	case err != nil:
		return key, "malformed token"
	}
	iat, err := parsed.Claims.GetIssuedAt()
	switch {
	case err != nil || iat == nil:
		return key, "token has no iat"
	case iat.Before(now.Add(-l.skew)):
		return key, "token expired"
	case iat.After(now.Add(l.skew)):
		return key, "token issued in the future: check the clock"
	}
	return key, ""
}
