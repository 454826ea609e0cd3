package sidecar

import (
	_ "embed"
	"encoding/json"
	"net/http"
	"sync"
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
// A stream counts against Config.MaxClients; every stream sends the same
// encoding of the status, made at most once a statusInterval/2
// (statusEvent), so many open pages cost one encoding a second.
func (s *Server) serveStatusStream(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Origin") != "" && !s.checkOrigin(r) {
		s.refuseOrigin(w, r)
		return
	}
	if reason, ok := s.clients.addStream(); !ok {
		httpRefusal(w, http.StatusServiceUnavailable, reason.text, nil)
		return
	}
	defer s.clients.removeStream()
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	rc := http.NewResponseController(w)
	tick := time.NewTicker(statusInterval)
	defer tick.Stop()
	for {
		_ = rc.SetWriteDeadline(time.Now().Add(s.cfg.WriteTimeout))
		if _, err := w.Write(s.statusEvent()); err != nil {
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

// statusCache is the status as an SSE event, shared by the status
// streams. The zero value is ready.
type statusCache struct {
	mu    sync.Mutex
	at    time.Time
	event []byte // never modified once handed out
}

// statusEvent returns the status as an SSE event, encoded anew when the
// last encoding is older than half a statusInterval.
func (s *Server) statusEvent() []byte {
	c := &s.statusCache
	c.mu.Lock()
	defer c.mu.Unlock()
	if now := time.Now(); c.event == nil || now.Sub(c.at) >= statusInterval/2 {
		data, _ := json.Marshal(s.Status()) // Status always encodes
		c.event = append(append(append(make([]byte, 0, len(data)+8), "data: "...), data...), '\n', '\n')
		c.at = now
	}
	return c.event
}
