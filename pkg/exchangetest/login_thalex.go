package exchangetest

import (
	"crypto/rsa"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/wsfan/wsfan/pkg/protocol"
)

// Thalex's error codes for a refused login.
const thalexAuthFailed = 19 // "authentication failed"

// thalexKey is a registered Thalex API key.
type thalexKey struct {
	pub      *rsa.PublicKey
	accounts []string // the first is the default
}

// WithThalexKey registers a Thalex API key under its key id: Thalex's
// public/login then wants a JWT signed RS512 by the key's private half,
// with the id as "kid" and an "iat" within the clock skew of the server's
// clock (WithClockSkew, WithClock). accounts are the account numbers the
// key may select with the login's "account" param; the first is the one
// selected without it (A000001 when none are given). Without a registered
// key, any login is accepted. A refused login gets error 19,
// "authentication failed", with the reason in its data.
func WithThalexKey(id string, pub *rsa.PublicKey, accounts ...string) Option {
	if len(accounts) == 0 {
		accounts = []string{"A000001"}
	}
	return func(c *config) {
		if c.thalexKeys == nil {
			c.thalexKeys = make(map[string]thalexKey)
		}
		c.thalexKeys[id] = thalexKey{pub: pub, accounts: slices.Clone(accounts)}
	}
}

// thalexLogin answers public/login on c's reader goroutine.
func thalexLogin(c *conn, req *protocol.Incoming) (any, *RPCError) {
	var p struct {
		Token   string `json:"token"`
		Account string `json:"account"`
	}
	if !decodeParams(req, &p) || p.Token == "" {
		return nil, errInvalidParams
	}
	cfg := &c.s.cfg
	account := p.Account
	if cfg.thalexKeys != nil {
		key, reason := verifyThalexToken(p.Token, cfg.thalexKeys, cfg.now(), cfg.skew)
		if reason != "" {
			return nil, &RPCError{Code: thalexAuthFailed, Message: "authentication failed", Data: reason}
		}
		switch {
		case account == "":
			account = key.accounts[0]
		case !slices.Contains(key.accounts, account):
			return nil, &RPCError{Code: thalexAuthFailed, Message: "authentication failed", Data: "account not accessible with this key"}
		}
	} else if account == "" {
		account = "A000001"
	}
	c.login = login{ok: true}
	return map[string]string{"account_number": account}, nil
}

// refusal is why a token is refused.
type refusal string

func (r refusal) Error() string { return string(r) }

// verifyThalexToken checks a login token's signing method, key, signature
// and age, returning the key that signed it or why it is refused.
func verifyThalexToken(token string, keys map[string]thalexKey, now time.Time, skew time.Duration) (thalexKey, string) {
	var key thalexKey
	parsed, err := jwt.Parse(token, func(t *jwt.Token) (any, error) {
		// Checked before any key is used, so no other method (HS512
		// keyed with the public key, "none") is ever tried.
		if t.Method != jwt.SigningMethodRS512 {
			return nil, refusal(fmt.Sprintf("signing method %v, want RS512", t.Header["alg"]))
		}
		kid, _ := t.Header["kid"].(string)
		k, ok := keys[kid]
		if !ok {
			return nil, refusal("unknown key id")
		}
		key = k
		return k.pub, nil
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
	case iat.Before(now.Add(-skew)):
		return key, "token expired"
	case iat.After(now.Add(skew)):
		return key, "token issued in the future: check the clock"
	}
	return key, ""
}
