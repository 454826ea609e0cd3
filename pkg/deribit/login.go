package deribit

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/wsfan/wsfan/internal/clock"
	"github.com/wsfan/wsfan/pkg/auth"
	"github.com/wsfan/wsfan/pkg/client"
)

// Key is a Deribit API key: its client id and client secret. It
// formats as its client id only. It is safe for concurrent use.
type Key struct {
	id     string
	secret []byte
}

// NewKey returns the Deribit API key clientID with its secret.
func NewKey(clientID, clientSecret string) *Key {
	return &Key{id: clientID, secret: []byte(clientSecret)}
}

// ClientID returns the key's client id.
func (k *Key) ClientID() string { return k.id }

// Format prints the client id, never the secret.
func (k Key) Format(f fmt.State, _ rune) { _, _ = fmt.Fprintf(f, "deribit.Key(%s)", k.id) }

// Sign returns Deribit's signature of a request made at timestamp
// (milliseconds since the epoch) with nonce and data: the hex
// HMAC-SHA256, keyed with the client secret, of
// timestamp + "\n" + nonce + "\n" + data. public/auth's client_signature
// grant signs empty data; a signed REST request signs its method, URI and
// body as data.
func (k *Key) Sign(timestamp int64, nonce, data string) string {
	mac := hmac.New(sha256.New, k.secret)
	var buf [24]byte
	mac.Write(strconv.AppendInt(buf[:0], timestamp, 10))
	mac.Write([]byte{'\n'})
	mac.Write([]byte(nonce))
	mac.Write([]byte{'\n'})
	mac.Write([]byte(data))
	var sum [sha256.Size]byte
	return hex.EncodeToString(mac.Sum(sum[:0]))
}

// LoginOption configures Login.
type LoginOption func(*loginConfig)

type loginConfig struct {
	credentials bool
	clock       clock.Clock
}

// WithClientCredentials logs in by sending the client secret itself
// (grant client_credentials). Default: a signature (grant
// client_signature), so the secret never leaves the process.
func WithClientCredentials() LoginOption {
	return func(c *loginConfig) { c.credentials = true }
}

// Login returns an on-connect hook that authenticates every connection
// with Deribit's public/auth and keeps it authenticated: it remembers the
// refresh token and, on a goroutine tied to the connection
// (client.WhileConnected), refreshes the access token when four fifths of
// its lifetime (expires_in) have passed. A refused refresh authenticates
// again; if that fails too, the connection is dropped and replaced, and
// the new one logs in afresh. Called directly with a connected client, it
// authenticates the live connection and keeps it so. A login the server
// refuses returns an error wrapping both client.ErrLoginRefused and the
// server's *client.RPCError.
func Login(key *Key, opts ...LoginOption) client.OnConnect {
	cfg := loginConfig{clock: clock.Real{}}
	for _, o := range opts {
		o(&cfg)
	}
	s := &session{key: key, cfg: cfg}
	return func(ctx context.Context, c *client.Client) error {
		tok, err := s.authenticate(ctx, c)
		if err != nil {
			return err
		}
		if tok.lifetime <= 0 {
			return nil // the token does not expire
		}
		return c.WhileConnected(ctx, func(ctx context.Context) error {
			return s.keepFresh(ctx, c, tok)
		})
	}
}

// session logs a key in. It keeps no state of its own: each
// connection's token lives on its refresh goroutine.
type session struct {
	key *Key
	cfg loginConfig
}

// token is what public/auth granted.
type token struct {
	refresh  string
	issued   time.Time // when it was asked for, by the session's clock
	lifetime time.Duration
}

// authParams are the params of public/auth.
type authParams struct {
	GrantType    string `json:"grant_type"`
	ClientID     string `json:"client_id,omitempty"`
	ClientSecret string `json:"client_secret,omitempty"`
	Timestamp    int64  `json:"timestamp,omitempty"`
	Nonce        string `json:"nonce,omitempty"`
	Signature    string `json:"signature,omitempty"`
	RefreshToken string `json:"refresh_token,omitempty"`
}

// authenticate logs in with the key.
func (s *session) authenticate(ctx context.Context, c *client.Client) (token, error) {
	now := s.cfg.clock.Now()
	p := authParams{GrantType: "client_signature", ClientID: s.key.id}
	if s.cfg.credentials {
		p.GrantType, p.ClientSecret = "client_credentials", string(s.key.secret)
	} else {
		p.Timestamp = now.UnixMilli()
		p.Nonce = nonce()
		p.Signature = s.key.Sign(p.Timestamp, p.Nonce, "")
	}
	return s.auth(ctx, c, now, &p)
}

// refresh trades the refresh token for a new token.
func (s *session) refresh(ctx context.Context, c *client.Client, tok token) (token, error) {
	return s.auth(ctx, c, s.cfg.clock.Now(), &authParams{GrantType: "refresh_token", RefreshToken: tok.refresh})
}

func (s *session) auth(ctx context.Context, c *client.Client, now time.Time, p *authParams) (token, error) {
	var res struct {
		AccessToken  string `json:"access_token"`
		RefreshToken string `json:"refresh_token"`
		ExpiresIn    int64  `json:"expires_in"`
	}
	if err := c.Call(ctx, "public/auth", p, &res); err != nil {
		return token{}, auth.Refused(err)
	}
	if res.AccessToken == "" {
		return token{}, errors.New("deribit: public/auth granted no access token")
	}
	return token{refresh: res.RefreshToken, issued: now, lifetime: time.Duration(res.ExpiresIn) * time.Second}, nil
}

// keepFresh refreshes tok, and each token after it, when four fifths of
// its lifetime have passed, until ctx (the connection) ends. It runs on
// the connection's goroutine from client.WhileConnected; an error drops
// the connection.
func (s *session) keepFresh(ctx context.Context, c *client.Client, tok token) error {
	for {
		due := tok.issued.Add(tok.lifetime / 5 * 4)
		fire, stop := s.cfg.clock.After(due.Sub(s.cfg.clock.Now()))
		select {
		case <-ctx.Done():
			stop()
			return nil
		case <-fire:
		}
		next, err := s.refresh(ctx, c, tok)
		if err != nil && ctx.Err() == nil {
			var again error
			if next, again = s.authenticate(ctx, c); again != nil {
				err = fmt.Errorf("deribit: token refresh failed (%v), and so did authenticating again: %w", err, again)
			} else {
				err = nil
			}
		}
		switch {
		case ctx.Err() != nil:
			return nil // the connection ended: its successor logs in anew
		case err != nil:
			return err
		}
		if next.lifetime <= 0 {
			return nil
		}
		tok = next
	}
}

// nonce returns a random nonce for a signature.
func nonce() string {
	var b [12]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return hex.EncodeToString(b[:])
}
