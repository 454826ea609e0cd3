package sidecar

import (
	_ "embed"
	"encoding/json"
	"net/http"
	"time"
)

// statusPage is the page served at /: the upstream, the topics with their
// rates, the clients with their queues, live from /v1/status/stream. It
// is one file with its script and style, no build step and nothing
// fetched from elsewhere, so it works where the sidecar has no internet.
//
//go:embed statuspage/index.html
var statusPage []byte

// statusInterval is how often /v1/status/stream sends the status.
const statusInterval = time.Second

// serveStatusPage serves the status page.
func (s *Server) serveStatusPage(w http.ResponseWriter, _ *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("Content-Security-Policy", "default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'")
	_, _ = w.Write(statusPage)
}

// serveStatusStream sends the status as an SSE message event at once and
// then every statusInterval, until the request ends or the Server closes.
func (s *Server) serveStatusStream(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Origin") != "" && !s.checkOrigin(r) {
		s.refuseOrigin(w, r)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	rc := http.NewResponseController(w)
	tick := time.NewTicker(statusInterval)
	defer tick.Stop()
	for {
		data, err := json.Marshal(s.Status())
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		_ = rc.SetWriteDeadline(time.Now().Add(s.cfg.WriteTimeout))
		if _, err := w.Write(append(append([]byte("data: "), data...), '\n', '\n')); err != nil {
			return
		}
		if rc.Flush() != nil {
			return
		}
		select {
		case <-tick.C:
		case <-r.Context().Done():
			return
		case <-s.ctx.Done():
			return
		}
	}
}
