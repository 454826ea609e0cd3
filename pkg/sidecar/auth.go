package sidecar

import (
	"fmt"
	"math"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"go.uber.org/zap"
)

// tokenCheck requires one of the live settings' tokens (Config.Token)
// from every request other than those to the open paths, as
// "Authorization: Bearer TOKEN" or as "?token=TOKEN" (for browsers'
// EventSource and WebSocket, which cannot set headers); the comparison
// takes constant time. The request goes on with the token in its context
// (requestToken), so a session remembers it and is closed when a reload
// removes it (Server.Reload). A refusal is counted
// (wsfan_sidecar_token_refusals_total) and logged once per remote host;
// guard paces the refusals of each address (tokenguard.go), so guessing
// is slow, and never sees a request with the right token.
type tokenCheck struct {
	live    *atomic.Pointer[liveSettings] // the tokens, none: everything passes
	open    []string
	refused *atomic.Uint64
	guard   *tokenGuard
	log     *zap.Logger
	logged  logOnce
}

// wrap returns next behind the token check.
func (tc *tokenCheck) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		live := tc.live.Load()
		if len(live.tokens) == 0 || slices.Contains(tc.open, r.URL.Path) {
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
		if token := []byte(got); live.holdsToken(token) {
			next.ServeHTTP(w, r.WithContext(withToken(r.Context(), token)))
			return
		}
		tc.refused.Add(1)
		remote, _, err := net.SplitHostPort(r.RemoteAddr)
		if err != nil {
			remote = r.RemoteAddr
		}
		if logRemote, logFull := tc.logged.first(remote); logRemote {
			tc.log.Warn("refused a request with a missing or wrong token (further ones from this address are counted, not logged)",
				zap.String("remote", remote), zap.String("path", r.URL.Path))
		} else if logFull {
			tc.log.Warn("refused another address's token; further ones are counted in wsfan_sidecar_token_refusals_total")
		}
		if retry := tc.guard.wait(r.Context(), r.RemoteAddr); retry > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(retry.Seconds()))))
			w.Header().Set("Connection", "close")
			http.Error(w, "too many wrong tokens from this address at once: retry later with the right token", http.StatusTooManyRequests)
			return
		}
		w.Header().Set("WWW-Authenticate", `Bearer realm="wsfan-sidecar"`)
		http.Error(w, "missing or wrong token: send it as the header 'Authorization: Bearer TOKEN', or as ?token=TOKEN", http.StatusUnauthorized)
	})
}

// refuseCrossSite refuses what a browser sends for a page of another site
// (Sec-Fetch-Site: cross-site or same-site, such as another port of
// localhost) unless the request names an allowed origin: an <img> or a
// <script> pointing at the sidecar sends no Origin, so the Origin check
// alone would let a page open a stream and subscribe upstream with it.
// Programs send no fetch metadata, and the sidecar's own page sends
// same-origin.
func (s *Server) refuseCrossSite(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		site := r.Header.Get("Sec-Fetch-Site")
		if site != "cross-site" && site != "same-site" {
			next.ServeHTTP(w, r)
			return
		}
		if origin := r.Header.Get("Origin"); origin != "" && s.checkOrigin(r) {
			next.ServeHTTP(w, r)
			return
		}
		s.stats.crossSiteRefusals.Add(1)
		if r.Header.Get("Origin") != "" { // a page's fetch or EventSource: told why, in a body it may read
			s.refuseOrigin(w, r)
			return
		}
		http.Error(w, fmt.Sprintf("a %s request without an allowed origin (Origin %q) is refused: a page of another site may use the sidecar "+
			"only from an origin listed in -allowed-origins (WSFAN_ALLOWED_ORIGINS, Config.AllowedOrigins)", site, r.Header.Get("Origin")),
			http.StatusForbidden)
	})
}

// checkOrigin lets programs (no Origin header) and pages served by the
// sidecar's own host in, and other web pages only when listed in
// Config.AllowedOrigins (as last reloaded), so a page on the open web cannot use a sidecar
// running on the user's machine.
func (s *Server) checkOrigin(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	if allowed := s.live.Load().origins; slices.Contains(allowed, "*") || slices.Contains(allowed, origin) {
		return true
	}
	u, err := url.Parse(origin)
	return err == nil && strings.EqualFold(u.Host, r.Host)
}
