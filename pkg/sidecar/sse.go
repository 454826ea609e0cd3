package sidecar

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"go.uber.org/zap"
)

// sseKeepAlive is how often an idle SSE stream gets a comment line, so
// proxies and browsers keep it open.
const sseKeepAlive = 15 * time.Second

// sseRetry is the reconnection delay the stream suggests to EventSource.
const sseRetry = 2 * time.Second

// serveSSE streams topics as Server-Sent Events (see sseevent.go for the
// events):
//
//	GET /v1/stream?topic=ticker.BTC-PERPETUAL.raw&topic=...[&event=topic]
//
// A stream that reconnects with the Last-Event-ID header (EventSource
// sends it by itself), or the lastEventId parameter, first gets what it
// missed from the topics' history, then the live messages. The handler
// goroutine is the session's reader and writer both. A topic that cannot
// be subscribed fails the whole request.
func (s *Server) serveSSE(w http.ResponseWriter, r *http.Request) {
	topics, err := streamTopics(r.URL.RawQuery, s.live.Load().maxTopicsPerClient)
	if err != nil {
		httpRefusal(w, http.StatusBadRequest, err.Error(), nil)
		return
	}
	if origin := r.Header.Get("Origin"); origin != "" {
		if !s.checkOrigin(r) {
			s.refuseOrigin(w, r)
			return
		}
		w.Header().Set("Access-Control-Allow-Origin", origin)
	}
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	enc, from, err := s.sseSettings(r)
	if err != nil {
		httpRefusal(w, http.StatusBadRequest, err.Error(), nil)
		return
	}
	// The stream's transport: its own socket when net/http can hand the
	// connection over (HTTP/1.x), else the handler's writer (HTTP/2).
	var tr transport
	var sock *sseSocket
	var st *sseStream
	if _, ok := w.(http.Hijacker); ok {
		sock = newSSESocket(s.cfg.WriteTimeout)
		tr = sock
	} else {
		st = &sseStream{w: w, flusher: flusher, wakeup: make(chan struct{}, 1), writeTimeout: s.cfg.WriteTimeout}
		tr = st
	}
	ss := newSession(r.RemoteAddr, &s.cfg, &s.stats, s.hub, tr)
	ss.enc, ss.marks, ss.resumeFrom = enc, true, from
	ss.token = requestToken(r)
	ss.trace = s.hub.tracer.remote(r)
	if sock != nil {
		sock.s = ss
	} else {
		st.s = ss
	}
	if reason, ok := s.register(ss); !ok {
		http.Error(w, reason.text, http.StatusServiceUnavailable)
		return
	}
	defer s.clients.remove(ss)

	reserved, invalid, refusal := s.hub.reserve(ss, topics)
	_, fresh, _, err := ss.await(r.Context(), topics, reserved, invalid, refusal)
	if err != nil {
		failed := slices.DeleteFunc(topics, ss.holds)
		ss.letGo(fresh)
		// reserve or await logged and recorded the refusal.
		httpRefusal(w, subscribeStatus(err), subscribeError(failed, err).Error(),
			map[string]any{"topics": shownTopics(failed)})
		return
	}

	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	first := fmt.Sprintf(": wsfan sidecar: streaming %s\nretry: %d\n\n", strings.Join(topics, ", "), sseRetry.Milliseconds())
	if sock != nil {
		if err := sock.hijack(w, first); err != nil {
			ss.letGo(fresh)
			ss.close(closeReason{}, true)
			if !errors.Is(err, net.ErrClosed) && !errors.Is(err, os.ErrDeadlineExceeded) {
				s.log.Debug("SSE stream not taken over", zap.Error(err))
			}
			return
		}
		ss.attach(nil, fresh)
		sock.watch()
		ss.unsubscribeAll()
		ss.close(closeReason{}, true)
		sock.end()
		return
	}
	w.WriteHeader(http.StatusOK)
	_, _ = fmt.Fprint(w, first)
	flusher.Flush()
	ss.attach(nil, fresh)

	st.writeLoop(r.Context().Done())
	ss.unsubscribeAll()
	ss.close(closeReason{}, true)
}

// streamTopics reads the topics a stream asks for (?topic=A&topic=B),
// sorted and without repeats: at least one, at most limit. A query of
// more parameters than limit and the stream's settings could be is
// refused before it is parsed.
func streamTopics(rawQuery string, limit int) ([]string, error) {
	if strings.Count(rawQuery, "&") >= limit+streamSettings {
		return nil, errors.New(reasonTooManyTopics(limit).text)
	}
	q, err := url.ParseQuery(rawQuery)
	if err != nil { // net/http would drop the malformed pair, and with it a topic
		return nil, fmt.Errorf("malformed query: %v: escape a topic's %% as %%25, & as %%26 and + as %%2B", err)
	}
	topics := slices.Compact(slices.Sorted(slices.Values(q["topic"])))
	switch {
	case len(topics) == 0 && q.Has("topics"):
		return nil, errors.New(`no parameter "topics": name each topic with its own topic=, /v1/stream?topic=NAME[&topic=NAME...]`)
	case len(topics) == 0:
		return nil, errors.New("name at least one topic: /v1/stream?topic=NAME[&topic=NAME...]")
	}
	if len(topics) > limit {
		return nil, errors.New(reasonTooManyTopics(limit).text)
	}
	return topics, nil
}

// streamSettings bounds the parameters of a stream's query that are not
// topics (event, token, and room for more).
const streamSettings = 16

// sseSettings reads what a stream asks for: its encoding, by ?event=topic
// (or the default, message), and where it resumes (nil: from now).
func (s *Server) sseSettings(r *http.Request) (*encoding, *resumePoint, error) {
	q := r.URL.Query()
	enc := sseMessages
	switch q.Get("event") {
	case "", "message":
	case "topic":
		enc = sseNamed
	default:
		return nil, nil, fmt.Errorf("event=%q: want message (the default) or topic", q.Get("event"))
	}
	switch q.Get("stamps") {
	case "", "0":
	case "1":
		if enc == sseNamed {
			enc = sseNamedStamped
		} else {
			enc = sseMessagesStamped
		}
	default:
		return nil, nil, fmt.Errorf("stamps=%q: want 1 (each message's times) or 0 (the default)", q.Get("stamps"))
	}
	id := r.Header.Get("Last-Event-ID")
	if id == "" {
		id = q.Get("lastEventId")
	}
	if id == "" {
		return enc, nil, nil
	}
	from := &resumePoint{}
	from.from, from.known = parseEventID(id, s.streamID)
	return enc, from, nil
}

// sseStream is an SSE session's transport: the response, written by the
// request's handler goroutine, which parks on wakeup while the queue is
// empty.
type sseStream struct {
	s            *session
	w            http.ResponseWriter
	flusher      http.Flusher
	wakeup       chan struct{} // capacity 1: a token means "look at the queue"
	writeTimeout time.Duration
}

func (st *sseStream) kind() sessionKind { return kindSSE }

// wake leaves a token for the parked handler. It never blocks: a token
// already waiting wakes it just as well, and a spare one only makes it
// look at the queue once more.
// tryWrite writes nothing: an SSE stream is written through its
// http.ResponseWriter, by its writer alone.
func (st *sseStream) tryWrite([]byte) int { return 0 }

func (st *sseStream) wake() {
	select {
	case st.wakeup <- struct{}{}:
	default:
	}
}

// abort does nothing: a stuck write ends at its deadline, and the
// handler then sees the session closing.
func (st *sseStream) abort() {}

// waitCalls returns at once: a stream forwards no calls.
func (st *sseStream) waitCalls(context.Context) {}

// cut does nothing: the handler returns once woken by the close, and the
// HTTP server owns the connection.
func (st *sseStream) cut() {}

// writeLoop writes queued events until the session closes or done (the
// request's context) ends.
func (st *sseStream) writeLoop(done <-chan struct{}) {
	rc := http.NewResponseController(st.w)
	tick := time.NewTicker(sseKeepAlive)
	defer tick.Stop()
	var spare [][]byte
	var tail []byte // a send slot, filled
	for {
		batch, ok := st.next(spare, done, tick.C)
		if !ok {
			return
		}
		_ = rc.SetWriteDeadline(time.Now().Add(st.writeTimeout))
		var err error
		if len(batch) == 0 {
			_, err = st.w.Write([]byte(": keep-alive\n\n"))
		}
		for _, f := range batch {
			if isSendSlot(f) { // its event's send stamp: now
				tail = fillSendSlot(tail[:0], f, time.Now().UnixNano())
				f = tail
			}
			if _, err = st.w.Write(f); err != nil {
				break
			}
		}
		st.flusher.Flush()
		spare = st.s.wrote(batch)
		if err != nil {
			st.s.close(closeReason{}, true)
			return
		}
	}
}

// next waits for frames and swaps the queue with spare; ok is false once
// the session is closing and nothing more is to be written. done ends the
// wait early; on every tick of an idle stream it returns an empty batch
// (a keep-alive).
func (st *sseStream) next(spare [][]byte, done <-chan struct{}, tick <-chan time.Time) (batch [][]byte, ok bool) {
	for {
		batch, closing := st.s.take(spare, true)
		if len(batch) > 0 {
			return batch, true
		}
		if closing {
			return nil, false
		}
		select { // idle: the next frame or the close leaves a token
		case <-st.wakeup:
		case <-done:
			st.s.close(closeReason{}, true)
		case <-tick:
			if st.s.resume() {
				return spare[:0], true
			}
			<-st.wakeup // a pusher made the writer busy and left a token
		}
	}
}
