package kraken

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/wsfan/wsfan/internal/clock"
	"github.com/wsfan/wsfan/pkg/client"
)

// Kraken's private channels and trading methods take a token in their
// params rather than a login on the connection: a token the REST method
// GetWebSocketsToken grants to a signed request
// (https://docs.kraken.com/api/docs/rest-api/get-websockets-token; the
// signature: https://docs.kraken.com/api/docs/guides/spot-rest-auth).
// Login fetches one for every new connection, before its subscriptions
// are restored, and leaves it in the session of the Client's dialect,
// which the encoders read (protocol.go).

// DefaultTokenURL is the base URL of Kraken's REST API, where Login asks
// for a token.
const DefaultTokenURL = "https://api.kraken.com"

// tokenPath is GetWebSocketsToken's path, which its signature covers.
const tokenPath = "/0/private/GetWebSocketsToken"

// Key is a Kraken API key: its public key and its private key (the
// secret, Base64 as Kraken shows it). It formats as the public key only.
// It is safe for concurrent use.
type Key struct {
	apiKey string
	secret []byte
	nonce  atomic.Int64 // the last nonce used, Unix microseconds or more
}

// NewKey returns the Kraken API key apiKey with its private key, as
// Kraken shows it (Base64).
func NewKey(apiKey, privateKey string) (*Key, error) {
	secret, err := base64.StdEncoding.DecodeString(privateKey)
	if err != nil {
		return nil, fmt.Errorf("kraken: the private key of %s is not Base64: %w", apiKey, err)
	}
	return &Key{apiKey: apiKey, secret: secret}, nil
}

// APIKey returns the key's public part.
func (k *Key) APIKey() string { return k.apiKey }

// Format prints the public key, never the private one.
func (k *Key) Format(f fmt.State, _ rune) { _, _ = fmt.Fprintf(f, "kraken.Key(%s)", k.apiKey) }

// Sign returns the API-Sign of a REST request to path with nonce and
// the form-encoded body (which holds the nonce): the Base64
// HMAC-SHA512, keyed with the private key, of path followed by the
// SHA-256 of nonce and body.
func (k *Key) Sign(path, nonce string, body []byte) string {
	return sign(k.secret, path, nonce, body)
}

func sign(secret []byte, path, nonce string, body []byte) string {
	inner := sha256.New()
	inner.Write([]byte(nonce))
	inner.Write(body)
	mac := hmac.New(sha512.New, secret)
	mac.Write([]byte(path))
	mac.Write(inner.Sum(nil))
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// nextNonce returns a nonce greater than every one the key gave before:
// Kraken refuses a nonce not above the key's last ("EAPI:Invalid
// nonce").
func (k *Key) nextNonce() string {
	for {
		last := k.nonce.Load()
		n := max(time.Now().UnixMicro(), last+1)
		if k.nonce.CompareAndSwap(last, n) {
			return strconv.FormatInt(n, 10)
		}
	}
}

// LoginOption configures Login.
type LoginOption func(*loginConfig)

type loginConfig struct {
	baseURL string
	http    *http.Client
	clock   clock.Clock // the dead man's switch's refreshes
}

// WithTokenURL sets the base URL Login asks for tokens at (a test
// exchange's ServerLogin on loopback). Default: DefaultTokenURL.
func WithTokenURL(base string) LoginOption {
	return func(c *loginConfig) { c.baseURL = strings.TrimRight(base, "/") }
}

// WithHTTPClient sets the HTTP client Login asks with. Default: one
// whose requests time out after 10 s.
func WithHTTPClient(h *http.Client) LoginOption {
	return func(c *loginConfig) { c.http = h }
}

// session is what a Client's dialect holds of its connections' logins:
// the token of the newest connection, which Login writes (on the
// connecting goroutine) and every encoder reads; and the dead man's
// switch's timeout in seconds while it is armed (deadman.go), written by
// the program's goroutine, read by each connection's refresher.
type session struct {
	tok   atomic.Pointer[string]
	armed atomic.Int64
}

// token is the newest connection's token, or "".
func (s *session) token() string {
	if t := s.tok.Load(); t != nil {
		return *t
	}
	return ""
}

// Login returns an on-connect hook that fetches a token with key from
// GetWebSocketsToken for every new connection, before its private
// channels are subscribed again, and leaves it where the Client's
// dialect (which must be this package's Protocol) puts it in private
// subscribes and calls. A request Kraken refuses for its credentials
// ("EAPI:Invalid key", "EAPI:Invalid signature", "EGeneral:Permission
// denied") returns an error wrapping client.ErrLoginRefused and the
// refusal as a *client.RPCError; any other failure (the network, a
// nonce, the service) is an error of the connection, which the client
// replaces. On each connection it keeps the dead man's switch, while
// it is armed (ArmDeadMansSwitch), refreshed.
func Login(key *Key, opts ...LoginOption) client.OnConnect {
	cfg := loginConfig{baseURL: DefaultTokenURL, http: &http.Client{Timeout: 10 * time.Second}, clock: clock.Real{}}
	for _, o := range opts {
		o(&cfg)
	}
	return func(ctx context.Context, c *client.Client) error {
		s, err := sessionOf(c)
		if err != nil {
			return fmt.Errorf("kraken.Login: %w", err)
		}
		tok, err := fetchToken(ctx, &cfg, key)
		if err != nil {
			return err
		}
		s.tok.Store(&tok)
		return c.WhileConnected(ctx, func(ctx context.Context) error { return s.keepSwitch(ctx, c, &cfg) })
	}
}

// tokenAnswer is GetWebSocketsToken's answer.
type tokenAnswer struct {
	Error  []string `json:"error"`
	Result struct {
		Token   string `json:"token"`
		Expires int    `json:"expires"`
	} `json:"result"`
}

// fetchToken asks GetWebSocketsToken for a token.
func fetchToken(ctx context.Context, cfg *loginConfig, key *Key) (string, error) {
	nonce := key.nextNonce()
	body := []byte(url.Values{"nonce": {nonce}}.Encode())
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, cfg.baseURL+tokenPath, strings.NewReader(string(body)))
	if err != nil {
		return "", fmt.Errorf("kraken login: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("API-Key", key.apiKey)
	req.Header.Set("API-Sign", key.Sign(tokenPath, nonce, body))
	resp, err := cfg.http.Do(req)
	if err != nil {
		return "", fmt.Errorf("kraken login: GetWebSocketsToken: %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return "", fmt.Errorf("kraken login: GetWebSocketsToken: %w", err)
	}
	var a tokenAnswer
	if err := json.Unmarshal(raw, &a); err != nil {
		return "", fmt.Errorf("kraken login: GetWebSocketsToken answered HTTP %d, not its JSON: %.100s", resp.StatusCode, raw)
	}
	if len(a.Error) > 0 {
		refusal := &client.RPCError{Message: strings.Join(a.Error, "; ")}
		for _, e := range a.Error {
			if credentialErrors[e] {
				return "", fmt.Errorf("%w: kraken login as %s: %w", client.ErrLoginRefused, key.apiKey, refusal)
			}
		}
		return "", fmt.Errorf("kraken login: GetWebSocketsToken: %w", refusal)
	}
	if a.Result.Token == "" {
		return "", errors.New("kraken login: GetWebSocketsToken granted no token")
	}
	return a.Result.Token, nil
}

// credentialErrors refuse a request for its credentials, which another
// try will not change (https://docs.kraken.com/api/docs/guides/spot-errors).
var credentialErrors = map[string]bool{
	"EAPI:Invalid key":           true,
	"EAPI:Invalid signature":     true,
	"EGeneral:Permission denied": true,
}
