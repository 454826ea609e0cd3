package okx

import (
	"crypto/subtle"
	"encoding/json"
	"strconv"
	"time"

	"github.com/wsfan/wsfan/pkg/protocol"
)

// ServerLogin is the server half of OKX's WebSocket login
// (https://www.okx.com/docs-v5/en/#overview-websocket-login): op "login"
// with the API key, its passphrase, a timestamp in Unix seconds and the
// signature Key.Sign makes of it. A login expires 30 s after its
// timestamp ("The request will expire 30 seconds after the timestamp")
// and holds for the connection's life. Without an API key it accepts
// any client that signs with the key it names and the secret "". It is
// safe for concurrent use.
type ServerLogin struct {
	apiKey, secret, passphrase string
	expiry                     time.Duration
}

// NewServerLogin returns the login checking apiKey, its secret and
// passphrase; an empty apiKey accepts any key with any passphrase whose
// signature is made with secret.
func NewServerLogin(apiKey, secret, passphrase string) *ServerLogin {
	return &ServerLogin{apiKey: apiKey, secret: secret, passphrase: passphrase, expiry: 30 * time.Second}
}

// Method is "login".
func (*ServerLogin) Method() string { return "login" }

// Authenticate checks a login's argument and answers it with the login
// event, {"event":"login","code":"0","msg":"","connId":…}, or refuses it
// with OKX's codes: 60005 an unknown key, 60024 a wrong passphrase, 60006
// a timestamp more than 30 s old (or ahead), 60007 a wrong signature,
// 60009 an argument it cannot read.
func (l *ServerLogin) Authenticate(_ int, params json.RawMessage, now time.Time) (any, time.Duration, *protocol.Error) {
	var a loginArgs
	if json.Unmarshal(params, &a) != nil || a.APIKey == "" || a.Timestamp == "" || a.Sign == "" {
		return nil, 0, &protocol.Error{Code: CodeLoginFailed, Message: "Login failed."}
	}
	if l.apiKey != "" && a.APIKey != l.apiKey {
		return nil, 0, &protocol.Error{Code: codeInvalidAPIKey, Message: "Invalid apiKey"}
	}
	if l.apiKey != "" && a.Passphrase != l.passphrase {
		return nil, 0, &protocol.Error{Code: codeWrongPassphrase, Message: "Wrong passphrase"}
	}
	ts, err := strconv.ParseInt(a.Timestamp, 10, 64)
	if err != nil {
		return nil, 0, &protocol.Error{Code: 60004, Message: "Invalid timestamp"}
	}
	if d := now.Sub(time.Unix(ts, 0)); d > l.expiry || d < -l.expiry {
		return nil, 0, &protocol.Error{Code: codeExpired, Message: "Timestamp request expired"}
	}
	want := sign([]byte(l.secret), a.Timestamp)
	if subtle.ConstantTimeCompare([]byte(want), []byte(a.Sign)) != 1 {
		return nil, 0, &protocol.Error{Code: codeInvalidSign, Message: "Invalid sign"}
	}
	return loginEvent{Event: "login", Code: "0", ConnID: connID}, 0, nil
}

// loginEvent is a login's success.
type loginEvent struct {
	Event  string `json:"event"`
	Code   string `json:"code"`
	Msg    string `json:"msg"`
	ConnID string `json:"connId"`
}
