package sidecar

import (
	"crypto/subtle"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// requireToken wraps next so that every request other than those to the
// open paths must carry token, as "Authorization: Bearer TOKEN" or as
// "?token=TOKEN" (for browsers' EventSource and WebSocket, which cannot set
// headers). The comparison takes constant time. An empty token lets
// everything through.
func requireToken(token string, next http.Handler, open ...string) http.Handler {
	if token == "" {
		return next
	}
	want := []byte(token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if slices.Contains(open, r.URL.Path) {
			next.ServeHTTP(w, r)
			return
		}
		got := r.URL.Query().Get("token")
		if h := r.Header.Get("Authorization"); h != "" {
			scheme, cred, _ := strings.Cut(h, " ")
			if strings.EqualFold(scheme, "Bearer") {
				got = strings.TrimSpace(cred)
			}
		}
		if subtle.ConstantTimeCompare([]byte(got), want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="wsfan-sidecar"`)
			http.Error(w, "missing or wrong token", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// checkOrigin lets programs (no Origin header) and pages served by the
// sidecar's own host in, and other web pages only when listed in
// Config.AllowedOrigins, so a page on the open web cannot use a sidecar
// running on the user's machine.
func (s *Server) checkOrigin(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	if slices.Contains(s.cfg.AllowedOrigins, "*") || slices.Contains(s.cfg.AllowedOrigins, origin) {
		return true
	}
	u, err := url.Parse(origin)
	return err == nil && strings.EqualFold(u.Host, r.Host)
}
