package sidecar

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/wsfan/wsfan/pkg/book"
)

// Books for browsers and scripts, from the book the sidecar keeps of a
// book topic (topic.book):
//
//	GET /v1/book?topic=book.BTC-PERPETUAL.100ms[&depth=10]
//	GET /v1/book?instrument=BTC-PERPETUAL            (a book topic of it)
//	GET /v1/book/stream?topic=...[&hz=10][&depth=10] (Server-Sent Events)
//
// Both subscribe the topic upstream when nobody holds it (and let go of
// it after the grace period), wait for a valid book within the request
// timeout, and answer bookJSON: the top depth levels a side, prices and
// sizes as exact decimal strings. The stream sends the book when it
// changed, at most hz times a second (conflated: a slow reader gets the
// latest book, never a backlog).

const (
	defaultBookDepth = 10
	maxBookDepth     = 1000
	defaultBookHz    = 10
	maxBookHz        = 50
)

// bookJSON is a book as /v1/book answers it.
type bookJSON struct {
	Topic string `json:"topic"`
	// Valid is false while the sidecar resyncs the book (a stream says
	// so once, then waits for the fresh one).
	Valid bool        `json:"valid"`
	Seq   int64       `json:"seq,omitempty"`
	Time  *time.Time  `json:"time,omitempty"`
	Bids  [][2]string `json:"bids"`
	Asks  [][2]string `json:"asks"`
	// Mid and Spread come from the best levels, when both sides have one.
	Mid    string `json:"mid,omitempty"`
	Spread string `json:"spread,omitempty"`
}

// newBookJSON renders s, its top depth levels a side.
func newBookJSON(s *book.State, depth int) bookJSON {
	levels := func(ls []book.Level) [][2]string {
		out := make([][2]string, 0, min(depth, len(ls)))
		for _, l := range ls[:min(depth, len(ls))] {
			out = append(out, [2]string{l.Price.String(), l.Size.String()})
		}
		return out
	}
	j := bookJSON{Topic: s.Topic, Valid: s.Valid, Seq: s.Seq, Bids: levels(s.Bids), Asks: levels(s.Asks)}
	if !s.Time.IsZero() {
		t := s.Time.UTC()
		j.Time = &t
	}
	if len(s.Bids) > 0 && len(s.Asks) > 0 {
		bid, ask := s.Bids[0].Price, s.Asks[0].Price
		j.Spread = ask.Sub(bid).String()
		j.Mid = bid.Add(ask).Half().String() // to the Decimal's last digit
	}
	return j
}

// bookQuery is what a book request asks for.
type bookQuery struct {
	topic string
	depth int
	hz    int
}

// readBookQuery reads ?topic= or ?instrument=, ?depth= and ?hz=.
func (s *Server) readBookQuery(q url.Values) (bookQuery, int, error) {
	bq := bookQuery{topic: q.Get("topic"), depth: defaultBookDepth, hz: defaultBookHz}
	var err error
	if v := q.Get("depth"); v != "" {
		if bq.depth, err = strconv.Atoi(v); err != nil || bq.depth < 1 || bq.depth > maxBookDepth {
			return bq, http.StatusBadRequest, fmt.Errorf("depth=%q: want 1 to %d levels a side", v, maxBookDepth)
		}
	}
	if v := q.Get("hz"); v != "" {
		if bq.hz, err = strconv.Atoi(v); err != nil || bq.hz < 1 || bq.hz > maxBookHz {
			return bq, http.StatusBadRequest, fmt.Errorf("hz=%q: want 1 to %d updates a second", v, maxBookHz)
		}
	}
	if bq.topic != "" {
		return bq, 0, nil
	}
	inst := q.Get("instrument")
	if inst == "" {
		return bq, http.StatusBadRequest, fmt.Errorf("name a book: /v1/book?topic=TOPIC or /v1/book?instrument=INSTRUMENT")
	}
	if bq.topic = s.bookTopicOf(inst); bq.topic == "" {
		return bq, http.StatusNotFound, fmt.Errorf("no book topic of %q is held or offered here; name one with ?topic= (a %s book topic)", inst, s.proto.Name())
	}
	return bq, 0, nil
}

// bookTopicOf finds a book topic of instrument: one the sidecar holds,
// else one it offers (Config.Topics); "" when none.
func (s *Server) bookTopicOf(instrument string) string {
	names := make([]string, 0)
	for _, t := range s.hub.list() {
		names = append(names, t.name)
	}
	names = append(names, s.live.Load().topics...)
	for _, name := range names {
		if book.RulesFor(s.proto.Name(), name) == nil {
			continue
		}
		for _, part := range strings.FieldsFunc(name, func(r rune) bool { return r == '.' || r == ':' }) {
			if part == instrument {
				return name
			}
		}
	}
	return ""
}

// holdBook takes a reference on the book topic (subscribing it upstream
// if need be) and waits for its book to be valid within the request
// timeout. The caller releases the topic.
func (s *Server) holdBook(ctx context.Context, name string) (*topic, *book.Book, int, error) {
	if book.RulesFor(s.proto.Name(), name) == nil {
		if _, err := s.hub.validate(name); err != nil {
			return nil, nil, http.StatusNotFound, err
		}
		return nil, nil, http.StatusBadRequest, fmt.Errorf("%q is not an order book topic of %s", name, s.proto.Name())
	}
	// reserve validates the name: it is parsed once on its way upstream.
	reserved, invalid, err := s.hub.reserve(nil, []string{name})
	if err != nil {
		return nil, nil, http.StatusServiceUnavailable, err
	}
	if len(reserved) == 0 {
		if errors.Is(invalid, errUnknownTopic) {
			return nil, nil, http.StatusNotFound, invalid
		}
		return nil, nil, http.StatusBadGateway, invalid // the upstream refused it lately (upstreamrefusals.go)
	}
	t := reserved[0]
	ctx, cancel := context.WithTimeout(ctx, s.cfg.RequestTimeout)
	defer cancel()
	if err := s.hub.wait(ctx, t); err != nil { // wait released t
		return nil, nil, subscribeStatus(err), err
	}
	poll := time.NewTicker(10 * time.Millisecond)
	defer poll.Stop()
	for {
		b := t.heldBook()
		if b == nil {
			s.hub.release(t)
			return nil, nil, http.StatusBadGateway, fmt.Errorf("the upstream's messages on %q are not %s book messages (see the log)", name, s.proto.Name())
		}
		if b.Valid() {
			return t, b, 0, nil
		}
		select {
		case <-poll.C:
		case <-ctx.Done():
			s.hub.release(t)
			return nil, nil, http.StatusServiceUnavailable, fmt.Errorf("no snapshot of %q from the upstream within %v", name, s.cfg.RequestTimeout)
		}
	}
}

// serveBook answers a book as JSON.
func (s *Server) serveBook(w http.ResponseWriter, r *http.Request) {
	if !s.allowBrowser(w, r) {
		return
	}
	bq, status, err := s.readBookQuery(r.URL.Query())
	if err != nil {
		httpRefusal(w, status, err.Error(), nil)
		return
	}
	t, b, status, err := s.holdBook(r.Context(), bq.topic)
	if err != nil {
		httpRefusal(w, status, err.Error(), map[string]any{"topic": bq.topic})
		return
	}
	defer s.hub.release(t)
	var st book.State
	b.CopyTo(&st)
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(newBookJSON(&st, bq.depth))
}

// serveBookStream streams a book as Server-Sent Events, conflated to at
// most hz events a second. The handler goroutine owns the stream.
func (s *Server) serveBookStream(w http.ResponseWriter, r *http.Request) {
	if !s.allowBrowser(w, r) {
		return
	}
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	bq, status, err := s.readBookQuery(r.URL.Query())
	if err != nil {
		httpRefusal(w, status, err.Error(), nil)
		return
	}
	if reason, ok := s.clients.addStream(); !ok {
		httpRefusal(w, http.StatusServiceUnavailable, reason.text, nil)
		return
	}
	defer s.clients.removeStream()
	t, b, status, err := s.holdBook(r.Context(), bq.topic)
	if err != nil {
		httpRefusal(w, status, err.Error(), map[string]any{"topic": bq.topic})
		return
	}
	defer s.hub.release(t)

	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	_, _ = fmt.Fprintf(w, ": wsfan sidecar: book %s, at most %d updates a second\nretry: %d\n\n", bq.topic, bq.hz, sseRetry.Milliseconds())

	tick := time.NewTicker(time.Second / time.Duration(bq.hz))
	defer tick.Stop()
	keepAlive := time.NewTimer(sseKeepAlive)
	defer keepAlive.Stop()
	rc := http.NewResponseController(w)
	enc := t.bookEvent(bq.depth)
	var (
		last book.Stats // the book's counts when it was last sent
		sent bool
	)
	for {
		if cur := b.Stats(); !sent || cur != last {
			var event []byte
			event, last = enc.event(b)
			sent = true
			_ = rc.SetWriteDeadline(time.Now().Add(s.cfg.WriteTimeout))
			if _, err := w.Write(event); err != nil {
				return
			}
			flusher.Flush()
			keepAlive.Reset(sseKeepAlive)
		}
		select {
		case <-r.Context().Done():
			return
		case <-s.ctx.Done():
			return
		case <-tick.C:
		case <-keepAlive.C:
			_ = rc.SetWriteDeadline(time.Now().Add(s.cfg.WriteTimeout))
			if _, err := w.Write([]byte(": keep-alive\n\n")); err != nil {
				return
			}
			flusher.Flush()
			keepAlive.Reset(sseKeepAlive)
		}
	}
}

// bookEvent is the SSE event of one book at one depth, shared by every
// stream of it: a book changed since the last tick is encoded once a
// tick, however many streams read it.
type bookEvent struct {
	mu    sync.Mutex
	depth int
	at    book.Stats // the book's counts when data was encoded
	data  []byte     // "data: {...}\n\n"; never modified once shared
}

// bookEvent returns the shared encoder of the topic's book at depth; it
// lives as long as the topic.
func (t *topic) bookEvent(depth int) *bookEvent {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.bookEvents == nil {
		t.bookEvents = make(map[int]*bookEvent)
	}
	e := t.bookEvents[depth]
	if e == nil {
		e = &bookEvent{depth: depth}
		t.bookEvents[depth] = e
	}
	return e
}

// event returns b's event, encoding it when b changed since the last
// encoding, and the book's counts it shows.
func (e *bookEvent) event(b *book.Book) ([]byte, book.Stats) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if cur := b.Stats(); e.data == nil || cur != e.at {
		var st book.State
		b.CopyTo(&st)
		enc, _ := json.Marshal(newBookJSON(&st, e.depth))
		data := make([]byte, 0, len("data: ")+len(enc)+2)
		e.data = append(append(append(data, "data: "...), enc...), "\n\n"...)
		e.at = cur
	}
	return e.data, e.at
}

// allowBrowser applies the SSE origin rule to a book request: a page of
// another origin needs -allowed-origins, and gets the CORS header.
func (s *Server) allowBrowser(w http.ResponseWriter, r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	if !s.checkOrigin(r) {
		s.refuseOrigin(w, r)
		return false
	}
	w.Header().Set("Access-Control-Allow-Origin", origin)
	return true
}
