package exchangetest

import (
	"crypto/subtle"
	"net/http"
)

// WithBearerToken makes the server accept only WebSocket handshakes that
// carry "Authorization: Bearer token", as Ethereum node providers do;
// others are answered HTTP 401. The default accepts every handshake.
func WithBearerToken(token string) Option {
	return func(c *config) { c.bearer = token }
}

// authorized reports whether the handshake r may be upgraded.
func (s *Server) authorized(r *http.Request) bool {
	if s.cfg.bearer == "" {
		return true
	}
	got := []byte(r.Header.Get("Authorization"))
	want := []byte("Bearer " + s.cfg.bearer)
	return subtle.ConstantTimeCompare(got, want) == 1
}
