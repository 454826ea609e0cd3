package client

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"

	"github.com/wsfan/wsfan/internal/redact"
)

// basicAuthFromURL moves a URL's user:password@ into an "Authorization:
// Basic" header of the handshake, as go-ethereum's rpc client does
// (rpc/websocket.go): node providers and proxies hand out such URLs, and
// RFC 6455 has no userinfo in ws:// URIs, so gorilla refuses them as
// malformed. An Authorization header given with WithHeader wins; the
// userinfo is then dropped. It returns raw and h unchanged when there is
// no userinfo, or when raw does not parse (the dial reports that).
func basicAuthFromURL(raw string, h http.Header) (string, http.Header) {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw, h
	}
	user := u.User.Username()
	pass, _ := u.User.Password()
	u.User = nil
	if h.Get("Authorization") == "" && (user != "" || pass != "") {
		h = h.Clone()
		if h == nil {
			h = make(http.Header)
		}
		h.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(user+":"+pass)))
	}
	return u.String(), h
}

// checkURL refuses a URL Dial cannot dial, before any dial: one without
// the ws:// or wss:// scheme and a host (127.0.0.1:8765 alone, or
// https://…), named redacted.
func checkURL(raw string) error {
	u, err := url.Parse(raw)
	if err == nil && (u.Scheme == "ws" || u.Scheme == "wss") && u.Host != "" {
		return nil
	}
	return fmt.Errorf("client: cannot dial %q: want a ws:// or wss:// URL, such as wss://thalex.com/ws/api/v2", redact.URL(raw))
}
