package sidecar

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"go.uber.org/zap"

	"github.com/wsfan/wsfan/pkg/natsbridge"
)

// errUnknownTopic marks a topic the sidecar refuses itself (not the
// dialect's, not offered, too long): the client's mistake.
var errUnknownTopic = errors.New("unknown topic")

// httpRefusal answers an HTTP request the sidecar refuses with status and
// a JSON body, {"error": message, ...more}, which names what to change.
func httpRefusal(w http.ResponseWriter, status int, message string, more map[string]any) {
	body := map[string]any{"error": message}
	for k, v := range more {
		body[k] = v
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false) // the body is JSON, never HTML: topic=a&topic=b reads as written
	_ = enc.Encode(body)
}

// subscribeStatus is the HTTP status of a stream whose topics could not
// be subscribed: 404 for a topic the sidecar does not know, 400 for more
// topics than a client may hold, 503 while the
// upstream does not answer or the sidecar (or its group member) is
// closing, 502 when it refused.
func subscribeStatus(err error) int {
	switch {
	case errors.Is(err, errUnknownTopic):
		return http.StatusNotFound
	case errors.Is(err, errTooManyTopics):
		return http.StatusBadRequest
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, ErrClosed), errors.Is(err, natsbridge.ErrClosed):
		return http.StatusServiceUnavailable
	}
	return http.StatusBadGateway
}

// refuseOrigin answers a browser request from an origin not allowed: 403
// naming the origin and the setting that allows it, logged once per
// origin.
func (s *Server) refuseOrigin(w http.ResponseWriter, r *http.Request) {
	origin := r.Header.Get("Origin")
	if logOrigin, logFull := s.origins.first(origin); logOrigin {
		s.log.Warn("refused a page of an origin that is not allowed; add it to -allowed-origins if it should use the sidecar",
			zap.String("origin", origin), zap.String("path", r.URL.Path), zap.String("remote", r.RemoteAddr))
	} else if logFull {
		s.log.Warn("refused another origin; further refused origins are not logged")
	}
	// The refused page may read why (and only why): without this header
	// the browser hides the answer from it, and it can only guess.
	w.Header().Set("Access-Control-Allow-Origin", origin)
	httpRefusal(w, http.StatusForbidden, fmt.Sprintf("origin %q is not allowed: a page may use the sidecar only from an origin "+
		"listed in -allowed-origins (WSFAN_ALLOWED_ORIGINS, allowed_origins in the config file, Config.AllowedOrigins); "+
		"a page opened from a file has the origin \"null\"", origin), map[string]any{"origin": origin})
}
