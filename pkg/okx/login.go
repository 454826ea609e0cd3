package okx

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/wsfan/wsfan/pkg/client"
)

// Key is an OKX API key: the key, its secret and the passphrase chosen
// with it. It formats as the key only. It is safe for concurrent use.
type Key struct {
	apiKey, passphrase string
	secret             []byte
}

// NewKey returns the OKX API key apiKey with its secret key and
// passphrase.
func NewKey(apiKey, secretKey, passphrase string) *Key {
	return &Key{apiKey: apiKey, secret: []byte(secretKey), passphrase: passphrase}
}

// APIKey returns the key's public part.
func (k *Key) APIKey() string { return k.apiKey }

// Format prints the API key, never the secret or the passphrase.
func (k Key) Format(f fmt.State, _ rune) { _, _ = fmt.Fprintf(f, "okx.Key(%s)", k.apiKey) }

// Sign returns the signature of a WebSocket login at timestamp (Unix
// seconds): the Base64 HMAC-SHA256, keyed with the secret, of
// timestamp + "GET" + "/users/self/verify"
// (https://www.okx.com/docs-v5/en/#overview-websocket-login).
func (k *Key) Sign(timestamp string) string {
	return sign(k.secret, timestamp)
}

func sign(secret []byte, timestamp string) string {
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(timestamp + "GET/users/self/verify"))
	var sum [sha256.Size]byte
	return base64.StdEncoding.EncodeToString(mac.Sum(sum[:0]))
}

// loginArgs is a login's one argument.
type loginArgs struct {
	APIKey     string `json:"apiKey"`
	Passphrase string `json:"passphrase"`
	Timestamp  string `json:"timestamp"`
	Sign       string `json:"sign"`
}

// Login returns an on-connect hook that logs every connection in with
// op "login", signed with key at the moment it is sent (a login expires
// 30 s after its timestamp). As the client makes the hook's calls before
// it restores a connection's subscriptions, private channels come back
// after the new connection is logged in. A refused login returns an error
// wrapping both client.ErrLoginRefused and the server's *client.RPCError
// when the credentials are at fault (60009 "Login failure", 60006
// "Timestamp request expired", …); any other failure (60014 "Requests too
// frequent", an internal error) is an error of the connection, which the
// client replaces.
func Login(key *Key) client.OnConnect {
	return func(ctx context.Context, c *client.Client) error {
		ts := strconv.FormatInt(time.Now().Unix(), 10)
		params := loginArgs{APIKey: key.apiKey, Passphrase: key.passphrase, Timestamp: ts, Sign: key.Sign(ts)}
		if err := c.Call(ctx, "login", params, nil); err != nil {
			var rpcErr *client.RPCError
			if !errors.As(err, &rpcErr) {
				return fmt.Errorf("okx login: %w", err)
			}
			// OKX may quote the request in its refusal ("Invalid request:
			// {…}"): the passphrase and the signature stay out of the error.
			shown := &client.RPCError{Code: rpcErr.Code, Data: rpcErr.Data,
				Message: strings.NewReplacer(params.Passphrase, "[redacted]", params.Sign, "[redacted]").Replace(rpcErr.Message)}
			if credentialCodes[rpcErr.Code] {
				return fmt.Errorf("%w: okx login as %s: %w", client.ErrLoginRefused, key.apiKey, shown)
			}
			return fmt.Errorf("okx login: %w", shown) // too frequent, an internal error: the next connection tries again
		}
		return nil
	}
}

// credentialCodes refuse a login for its credentials, which another try
// will not change (https://www.okx.com/docs-v5/en/#error-code-websocket-public):
// 60004 an invalid timestamp, 60005 an invalid apiKey, 60006 an expired
// timestamp, 60007 an invalid sign, 60009 "Login failure", 60024 a wrong
// passphrase, 60032 an API key that does not exist.
var credentialCodes = map[int]bool{60004: true, 60005: true, 60006: true, 60007: true, 60009: true, 60024: true, 60032: true}
