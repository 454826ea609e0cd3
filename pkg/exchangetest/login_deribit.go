package exchangetest

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"strconv"
	"sync"
	"time"

	"github.com/wsfan/wsfan/pkg/protocol"
)

// Deribit's error codes for a refused login.
const (
	deribitInvalidCredentials = 13004 // wrong client id or secret
	deribitUnauthorized       = 13009 // bad signature, stale timestamp, unknown token
)

// WithTokenExpiry sets the lifetime of the access tokens Deribit's
// public/auth hands out (its expires_in). When it runs out the connection
// counts as logged out, and private channels are refused, until it
// refreshes its token (grant refresh_token) or authenticates again. A
// refresh token is good for one refresh, on the connection it was issued
// to, until RevokeTokens. The default is 900s, Deribit's.
func WithTokenExpiry(d time.Duration) Option {
	return func(c *config) { c.tokenTTL = d }
}

// RevokeTokens invalidates every refresh token handed out so far, as an
// exchange does when the API key is changed: the next refresh is refused
// with error 13009 and the client has to authenticate again.
func (s *Server) RevokeTokens() { s.tokens.revoke() }

// tokenTable holds the refresh tokens handed out and not used yet. The
// zero value is ready to use.
type tokenTable struct {
	mu      sync.Mutex
	next    int
	refresh map[string]int // token → the connection it was issued to
}

// issue returns a new access token and refresh token for connection id.
func (t *tokenTable) issue(conn int) (access, refresh string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.next++
	n := strconv.Itoa(conn) + "." + strconv.Itoa(t.next)
	access, refresh = "exchangetest-access-"+n, "exchangetest-refresh-"+n
	if t.refresh == nil {
		t.refresh = make(map[string]int)
	}
	t.refresh[refresh] = conn
	return access, refresh
}

// redeem uses up a refresh token, reporting whether it was issued to conn
// and not used or revoked since.
func (t *tokenTable) redeem(token string, conn int) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	owner, ok := t.refresh[token]
	if !ok || owner != conn {
		return false
	}
	delete(t.refresh, token)
	return true
}

func (t *tokenTable) revoke() {
	t.mu.Lock()
	defer t.mu.Unlock()
	clear(t.refresh)
}

// deribitAuthParams are the params of public/auth.
type deribitAuthParams struct {
	GrantType    string `json:"grant_type"`
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret"`
	RefreshToken string `json:"refresh_token"`
	Timestamp    int64  `json:"timestamp"` // milliseconds
	Signature    string `json:"signature"`
	Nonce        string `json:"nonce"`
	Data         string `json:"data"`
}

// deribitAuthResult is the result of public/auth.
type deribitAuthResult struct {
	AccessToken  string `json:"access_token"`
	ExpiresIn    int64  `json:"expires_in"` // seconds
	RefreshToken string `json:"refresh_token"`
	TokenType    string `json:"token_type"`
	Scope        string `json:"scope"`
}

// deribitAuth answers public/auth on c's reader goroutine.
func deribitAuth(c *conn, req *protocol.Incoming) (any, *RPCError) {
	var p deribitAuthParams
	if !decodeParams(req, &p) {
		return nil, errInvalidParams
	}
	cfg := &c.s.cfg
	now := cfg.now()
	switch p.GrantType {
	case "client_credentials":
		if cfg.credentials && (!equal(p.ClientID, cfg.key) || !equal(p.ClientSecret, cfg.secret)) {
			return nil, &RPCError{Code: deribitInvalidCredentials, Message: "invalid_credentials"}
		}
	case "client_signature":
		if rerr := checkSignature(cfg, &p, now); rerr != nil {
			return nil, rerr
		}
	case "refresh_token":
		if !c.s.tokens.redeem(p.RefreshToken, c.id) {
			return nil, unauthorized("invalid or expired refresh token")
		}
	default:
		return nil, errInvalidParams
	}
	access, refresh := c.s.tokens.issue(c.id)
	c.login = login{ok: true, expires: now.Add(cfg.tokenTTL)}
	return deribitAuthResult{
		AccessToken:  access,
		ExpiresIn:    int64(cfg.tokenTTL / time.Second),
		RefreshToken: refresh,
		TokenType:    "bearer",
		Scope:        "connection mainaccount",
	}, nil
}

// checkSignature checks a client_signature login: the client id, the
// timestamp against the clock skew, and the HMAC-SHA256, keyed with the
// client secret, of timestamp + "\n" + nonce + "\n" + data.
func checkSignature(cfg *config, p *deribitAuthParams, now time.Time) *RPCError {
	if !cfg.credentials {
		return nil
	}
	if !equal(p.ClientID, cfg.key) {
		return &RPCError{Code: deribitInvalidCredentials, Message: "invalid_credentials"}
	}
	signed := time.UnixMilli(p.Timestamp)
	switch {
	case signed.Before(now.Add(-cfg.skew)):
		return unauthorized("timestamp expired")
	case signed.After(now.Add(cfg.skew)):
		return unauthorized("timestamp in the future: check the clock")
	}
	mac := hmac.New(sha256.New, []byte(cfg.secret))
	mac.Write([]byte(strconv.FormatInt(p.Timestamp, 10) + "\n" + p.Nonce + "\n" + p.Data))
	want := hex.EncodeToString(mac.Sum(nil))
	if !equal(p.Signature, want) {
		return unauthorized("invalid signature")
	}
	return nil
}

func unauthorized(reason string) *RPCError {
	return &RPCError{Code: deribitUnauthorized, Message: "unauthorized", Data: map[string]string{"reason": reason}}
}

// equal compares secrets in constant time.
func equal(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }
