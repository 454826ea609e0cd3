package sidecar

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
)

// sseKeepAlive is how often an idle SSE stream gets a comment line, so
// proxies and browsers keep it open.
const sseKeepAlive = 15 * time.Second

// serveSSE streams topics as Server-Sent Events:
//
//	GET /v1/stream?topic=ticker.BTC-PERPETUAL.raw&topic=...
//
//	event: ticker.BTC-PERPETUAL.raw
//	data: {...the notification payload...}
//
// The handler goroutine is the session's reader and writer both.
func (s *Server) serveSSE(w http.ResponseWriter, r *http.Request) {
	topics := slices.Compact(slices.Sorted(slices.Values(r.URL.Query()["topic"])))
	if len(topics) == 0 {
		http.Error(w, "name at least one topic: /v1/stream?topic=NAME[&topic=NAME...]", http.StatusBadRequest)
		return
	}
	if len(topics) > s.cfg.MaxTopicsPerClient {
		http.Error(w, reasonTooManyTopics(s.cfg.MaxTopicsPerClient).text, http.StatusBadRequest)
		return
	}
	if origin := r.Header.Get("Origin"); origin != "" {
		if !s.checkOrigin(r) {
			http.Error(w, "origin not allowed", http.StatusForbidden)
			return
		}
		w.Header().Set("Access-Control-Allow-Origin", origin)
	}
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	ss := newSession(s, kindSSE, r.RemoteAddr)
	if reason, ok := s.addSession(ss); !ok {
		code := http.StatusServiceUnavailable
		http.Error(w, reason.text, code)
		return
	}
	defer s.removeSession(ss)

	ctx, cancel := context.WithTimeout(r.Context(), s.cfg.RequestTimeout)
	var failed error
	var held []*topic
	for _, name := range topics {
		if _, err := s.proto.NewTopic(name); err != nil {
			failed = err
			break
		}
		t, err := s.hub.reserve(name)
		if err != nil {
			failed = err
			break
		}
		held = append(held, t)
	}
	for _, t := range held {
		if failed != nil {
			s.hub.release(t)
			continue
		}
		if err := s.hub.wait(ctx, t); err != nil { // wait released it
			failed = fmt.Errorf("topic %s: %w", t.name, err)
			continue
		}
		ss.topics[t.name] = t
	}
	cancel()
	if failed != nil {
		ss.detachAll()
		http.Error(w, "failed to subscribe: "+failed.Error(), http.StatusBadGateway)
		return
	}

	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fmt.Fprintf(w, ": wsfan sidecar: streaming %s\n\n", strings.Join(topics, ", "))
	flusher.Flush()
	for _, t := range ss.topics {
		t.attach(ss)
	}
	ss.ntopics.Store(int32(len(ss.topics)))

	s.sseWriteLoop(ss, w, flusher, r.Context().Done())
	ss.detachAll()
	ss.close(closeReason{}, true)
}

// sseWriteLoop writes queued events until the session closes or the
// request ends.
func (s *Server) sseWriteLoop(ss *session, w http.ResponseWriter, flusher http.Flusher, done <-chan struct{}) {
	rc := http.NewResponseController(w)
	tick := time.NewTicker(sseKeepAlive)
	defer tick.Stop()
	var spare [][]byte
	for {
		batch, ok := ss.next(spare, done, tick.C)
		if !ok {
			return
		}
		_ = rc.SetWriteDeadline(time.Now().Add(s.cfg.WriteTimeout))
		var err error
		if len(batch) == 0 {
			_, err = w.Write([]byte(": keep-alive\n\n"))
		}
		for _, f := range batch {
			if _, err = w.Write(f); err != nil {
				break
			}
		}
		flusher.Flush()
		spare = ss.wrote(batch)
		if err != nil {
			ss.close(closeReason{}, true)
			return
		}
	}
}
