package thalex

import (
	"context"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/wsfan/wsfan/internal/clock"
	"github.com/wsfan/wsfan/pkg/auth"
	"github.com/wsfan/wsfan/pkg/client"
)

// Key is a Thalex API key: the id Thalex assigned and the RSA
// private key whose public half is registered with Thalex. It formats as
// its id only. It is safe for concurrent use.
type Key struct {
	id  string
	key *rsa.PrivateKey
}

// ParseKey reads a Thalex API key: its id and its RSA private key in
// PEM, PKCS#1 ("RSA PRIVATE KEY") or PKCS#8 ("PRIVATE KEY").
func ParseKey(id string, pemKey []byte) (*Key, error) {
	block, _ := pem.Decode(pemKey)
	if block == nil {
		return nil, errors.New("thalex: key: no PEM block found")
	}
	var key *rsa.PrivateKey
	switch block.Type {
	case "RSA PRIVATE KEY":
		k, err := x509.ParsePKCS1PrivateKey(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("thalex: key: %w", err)
		}
		key = k
	case "PRIVATE KEY":
		k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("thalex: key: %w", err)
		}
		rk, ok := k.(*rsa.PrivateKey)
		if !ok {
			return nil, fmt.Errorf("thalex: key: a %T, not an RSA key", k)
		}
		key = rk
	default:
		return nil, fmt.Errorf("thalex: key: PEM block %q, want \"RSA PRIVATE KEY\" or \"PRIVATE KEY\"", block.Type)
	}
	return NewKey(id, key), nil
}

// NewKey returns the Thalex API key id whose private key is key.
func NewKey(id string, key *rsa.PrivateKey) *Key {
	return &Key{id: id, key: key}
}

// ID returns the key's id, the "kid" of its tokens.
func (k *Key) ID() string { return k.id }

// Format prints the key's id, never the private key.
func (k Key) Format(f fmt.State, _ rune) { _, _ = fmt.Fprintf(f, "thalex.Key(%s)", k.id) }

// Token returns a login token issued at now: a JWT signed RS512 with the
// key, its id as "kid" and now as "iat". Thalex's public/login takes it on
// a WebSocket, its REST API as a bearer token.
func (k *Key) Token(now time.Time) (string, error) {
	t := jwt.NewWithClaims(jwt.SigningMethodRS512, jwt.RegisteredClaims{IssuedAt: jwt.NewNumericDate(now)})
	t.Header["kid"] = k.id
	s, err := t.SignedString(k.key)
	if err != nil {
		return "", fmt.Errorf("thalex: failed to sign a token with key %s: %w", k.id, err)
	}
	return s, nil
}

// LoginOption configures Login.
type LoginOption func(*loginConfig)

type loginConfig struct {
	account string
	clock   clock.Clock
}

// WithAccount selects the account (or subaccount) the connection trades
// for, by its number: public/login's "account". Default: the key's
// default account.
func WithAccount(number string) LoginOption {
	return func(c *loginConfig) { c.account = number }
}

// loginParams are the params of public/login.
type loginParams struct {
	Token   string `json:"token"`
	Account string `json:"account,omitempty"`
}

// Login returns an on-connect hook that logs in with Thalex's
// public/login on every connection, with a fresh token from key. Called
// directly with a connected client, it logs in on the live connection.
// A login the server refuses returns an error wrapping both
// client.ErrLoginRefused and the server's *client.RPCError.
func Login(key *Key, opts ...LoginOption) client.OnConnect {
	cfg := loginConfig{clock: clock.Real{}}
	for _, o := range opts {
		o(&cfg)
	}
	return func(ctx context.Context, c *client.Client) error {
		token, err := key.Token(cfg.clock.Now())
		if err != nil {
			return err
		}
		return auth.Refused(c.Call(ctx, "public/login", loginParams{Token: token, Account: cfg.account}, nil))
	}
}
