package deribit

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"sync"
	"time"

	"github.com/wsfan/wsfan/pkg/protocol"
)

// Deribit's error codes for a refused login.
const (
	codeInvalidCredentials = 13004 // wrong client id or secret
	codeUnauthorized       = 13009 // bad signature, stale timestamp, unknown token
)

// ServerLogin is the server half of Deribit's login, public/auth: grant
// client_credentials (the secret itself), client_signature (the
// HMAC-SHA256 of timestamp, nonce and data keyed with the secret, the
// timestamp within the clock skew) or refresh_token. An access token
// lasts its expires_in (900s, Deribit's), after which the connection
// counts as logged out until it refreshes or authenticates again; a
// refresh token is good for one refresh, on the connection it was issued
// to, until RevokeTokens. Without credentials it accepts any client. It is
// safe for concurrent use.
type ServerLogin struct {
	id, secret string // "" id: any client
	ttl        time.Duration
	skew       time.Duration
	tokens     tokenTable
}

// NewServerLogin returns the login checking clientID and clientSecret;
// empty ones accept any client.
func NewServerLogin(clientID, clientSecret string) *ServerLogin {
	return &ServerLogin{id: clientID, secret: clientSecret, ttl: 900 * time.Second, skew: 30 * time.Second}
}

// WithTokenExpiry sets the access tokens' lifetime. Default: 900s.
func (l *ServerLogin) WithTokenExpiry(d time.Duration) *ServerLogin {
	l.ttl = d
	return l
}

// WithClockSkew sets how far a signature's timestamp may be from the
// server's clock. Default: 30s.
func (l *ServerLogin) WithClockSkew(d time.Duration) *ServerLogin {
	l.skew = d
	return l
}

// RevokeTokens invalidates every refresh token handed out so far, as
// Deribit does when the API key is changed: the next refresh is refused
// with error 13009 and the client has to authenticate again.
func (l *ServerLogin) RevokeTokens() { l.tokens.revoke() }

// Method is "public/auth".
func (l *ServerLogin) Method() string { return "public/auth" }

// serverAuthParams are the params of public/auth as a server reads them.
type serverAuthParams struct {
	GrantType    string `json:"grant_type"`
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret"`
	RefreshToken string `json:"refresh_token"`
	Timestamp    int64  `json:"timestamp"` // milliseconds
	Signature    string `json:"signature"`
	Nonce        string `json:"nonce"`
	Data         string `json:"data"`
}

// authResult is the result of public/auth.
type authResult struct {
	AccessToken  string `json:"access_token"`
	ExpiresIn    int64  `json:"expires_in"` // seconds
	RefreshToken string `json:"refresh_token"`
	TokenType    string `json:"token_type"`
	Scope        string `json:"scope"`
}

// Authenticate answers public/auth on connection conn.
func (l *ServerLogin) Authenticate(conn int, params json.RawMessage, now time.Time) (any, time.Duration, *protocol.Error) {
	var p serverAuthParams
	if len(params) == 0 || json.Unmarshal(params, &p) != nil {
		return nil, 0, &protocol.Error{Code: protocol.CodeInvalidParams, Message: "invalid params"}
	}
	switch p.GrantType {
	case "client_credentials":
		if l.id != "" && (!equal(p.ClientID, l.id) || !equal(p.ClientSecret, l.secret)) {
			return nil, 0, &protocol.Error{Code: codeInvalidCredentials, Message: "invalid_credentials"}
		}
	case "client_signature":
		if rerr := l.checkSignature(&p, now); rerr != nil {
			return nil, 0, rerr
		}
	case "refresh_token":
		if !l.tokens.redeem(p.RefreshToken, conn) {
			return nil, 0, unauthorized("invalid or expired refresh token")
		}
	default:
		return nil, 0, &protocol.Error{Code: protocol.CodeInvalidParams, Message: "invalid params"}
	}
	access, refresh := l.tokens.issue(conn)
	return authResult{
		AccessToken:  access,
		ExpiresIn:    int64(l.ttl / time.Second),
		RefreshToken: refresh,
		TokenType:    "bearer",
		Scope:        "connection mainaccount",
	}, l.ttl, nil
}

// checkSignature checks a client_signature login: the client id, the
// timestamp against the clock skew, and the HMAC-SHA256, keyed with the
// client secret, of timestamp + "\n" + nonce + "\n" + data.
func (l *ServerLogin) checkSignature(p *serverAuthParams, now time.Time) *protocol.Error {
	if l.id == "" {
		return nil
	}
	if !equal(p.ClientID, l.id) {
		return &protocol.Error{Code: codeInvalidCredentials, Message: "invalid_credentials"}
	}
	signed := time.UnixMilli(p.Timestamp)
	switch {
	case signed.Before(now.Add(-l.skew)):
		return unauthorized("timestamp expired")
	case signed.After(now.Add(l.skew)):
		return unauthorized("timestamp in the future: check the clock")
	}
	mac := hmac.New(sha256.New, []byte(l.secret))
	mac.Write([]byte(strconv.FormatInt(p.Timestamp, 10) + "\n" + p.Nonce + "\n" + p.Data))
	if !equal(p.Signature, hex.EncodeToString(mac.Sum(nil))) {
		return unauthorized("invalid signature")
	}
	return nil
}

func unauthorized(reason string) *protocol.Error {
	return protocol.NewError(codeUnauthorized, "unauthorized", map[string]string{"reason": reason})
}

// equal compares secrets in constant time.
func equal(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }

// tokenTable holds the refresh tokens handed out and not used yet. The
// zero value is ready to use.
type tokenTable struct {
	mu      sync.Mutex
	next    int
	refresh map[string]int // token → the connection it was issued to
}

// issue returns a new access token and refresh token for connection conn.
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
