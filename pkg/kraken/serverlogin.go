package kraken

import (
	"crypto/hmac"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/wsfan/wsfan/internal/jsonscan"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// ServerLogin is the server half of Kraken's tokens: an http.Handler
// serving the REST method GetWebSocketsToken (POST
// /0/private/GetWebSocketsToken, signed as Key.Sign signs), which grants
// a token, and the venue.Authenticator a test exchange checks the token
// of a private subscribe or call with. A token must be used within 15
// minutes of its grant ("expires": 900); once used it holds
// (https://docs.kraken.com/api/docs/rest-api/get-websockets-token). Its
// refusals are Kraken's: {"error":["EAPI:Invalid key"]} over REST, the
// error text alone on the WebSocket ("EAuth:Invalid token"). Without a key it grants a token to any key and takes any token
// it is shown. It is safe for concurrent use.
type ServerLogin struct {
	apiKey string
	secret []byte

	mu     sync.Mutex
	issued map[string]time.Time // token → when it was granted; zero once used
	grants int
}

// tokenLifetime is how long a granted token may wait for its first use.
const tokenLifetime = 15 * time.Minute

// NewServerLogin returns the login granting tokens to apiKey whose
// requests are signed with privateKey (Base64); an empty apiKey grants
// one to any request and takes any token.
func NewServerLogin(apiKey, privateKey string) *ServerLogin {
	secret, _ := base64.StdEncoding.DecodeString(privateKey) // a test's key: a bad one fails every signature
	return &ServerLogin{apiKey: apiKey, secret: secret, issued: make(map[string]time.Time)}
}

// Method names the REST method: no WebSocket request has it.
func (*ServerLogin) Method() string { return "GetWebSocketsToken" }

// Grants returns how many tokens the login granted.
func (l *ServerLogin) Grants() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.grants
}

// Authenticate checks the token a request carries (a JSON string): one
// granted and, unless used before, not older than 15 minutes. The
// connection holds the login as long as it lasts.
func (l *ServerLogin) Authenticate(_ int, params json.RawMessage, now time.Time) (any, time.Duration, *protocol.Error) {
	tok, ok := jsonscan.AppendString(nil, params)
	if !ok || len(tok) == 0 {
		return nil, 0, errInvalidToken
	}
	if l.apiKey == "" {
		return nil, 0, nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	granted, known := l.issued[string(tok)]
	if !known || (!granted.IsZero() && now.Sub(granted) > tokenLifetime) {
		return nil, 0, errInvalidToken
	}
	l.issued[string(tok)] = time.Time{}
	return nil, 0, nil
}

// errInvalidToken refuses a token not granted or expired.
var errInvalidToken = &protocol.Error{Code: protocol.CodeInvalidParams, Message: "EAuth:Invalid token"}

// ServeHTTP answers GetWebSocketsToken: {"error":[],"result":{"token":…,
// "expires":900}}, or {"error":["EAPI:Invalid key"]} (an unknown key),
// ["EAPI:Invalid signature"] or ["EAPI:Invalid nonce"] (none).
func (l *ServerLogin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	if r.Method != http.MethodPost || r.URL.Path != tokenPath {
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"error":["EGeneral:Unknown method"]}`)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<10))
	form, ferr := url.ParseQuery(string(body))
	switch {
	case err != nil || ferr != nil || form.Get("nonce") == "":
		_, _ = io.WriteString(w, `{"error":["EAPI:Invalid nonce"]}`)
		return
	case l.apiKey != "" && r.Header.Get("API-Key") != l.apiKey:
		_, _ = io.WriteString(w, `{"error":["EAPI:Invalid key"]}`)
		return
	case l.apiKey != "" && !hmac.Equal([]byte(r.Header.Get("API-Sign")), []byte(sign(l.secret, tokenPath, form.Get("nonce"), body))):
		_, _ = io.WriteString(w, `{"error":["EAPI:Invalid signature"]}`)
		return
	}
	var raw [24]byte
	_, _ = rand.Read(raw[:]) // crypto/rand.Read never fails
	tok := base64.RawURLEncoding.EncodeToString(raw[:])
	l.mu.Lock()
	l.issued[tok] = time.Now()
	l.grants++
	l.mu.Unlock()
	_, _ = io.WriteString(w, `{"error":[],"result":{"token":"`+tok+`","expires":900}}`)
}
