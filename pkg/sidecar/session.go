package sidecar

import (
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// sessionKind is how a local client is served.
type sessionKind uint8

const (
	kindWS sessionKind = iota
	kindSSE
)

func (k sessionKind) String() string {
	if k == kindSSE {
		return "sse"
	}
	return "websocket"
}

// session is one local client: a WebSocket connection or an SSE stream. Its
// queue is bounded in bytes and filled without blocking by any goroutine
// (topic pumps, the reader answering requests, forwarded calls); its one
// writer goroutine empties it.
type session struct {
	srv    *Server
	id     uint64
	kind   sessionKind
	remote string
	since  time.Time
	nc     net.Conn // WebSocket only; its write deadline cuts a stuck write short

	// Counters: offered = delivered + dropped, exactly.
	delivered    atomic.Uint64 // frames queued
	dropped      atomic.Uint64 // frames not queued: full queue, or the session closing
	written      atomic.Uint64 // frames written to the connection
	writtenBytes atomic.Uint64
	ntopics      atomic.Int32 // len(topics), for the status page

	// mu protects the queue.
	mu      sync.Mutex
	frames  [][]byte
	bytes   int  // bytes queued and being written
	waiting bool // the writer is parked on wake
	closing bool // no frame is accepted any more
	discard bool // while closing: drop the queued frames instead of writing them
	last    []byte
	reason  closeReason // why the session is closing
	wake    chan struct{}

	// Owned by the reader goroutine (the SSE handler for SSE).
	topics map[string]*topic
}

func newSession(srv *Server, kind sessionKind, remote string) *session {
	return &session{
		srv:    srv,
		id:     srv.nextSession.Add(1),
		kind:   kind,
		remote: remote,
		since:  time.Now(),
		wake:   make(chan struct{}, 1),
		topics: make(map[string]*topic),
	}
}

// offer queues a notification frame without blocking and reports whether
// it was queued. A full queue drops it or closes the session, by policy.
func (s *session) offer(frame []byte) bool {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		s.dropped.Add(1)
		s.srv.stats.dropped[dropClosing].Add(1)
		return false
	}
	if s.bytes > 0 && s.bytes+len(frame) > s.srv.cfg.QueueBytes {
		if s.srv.cfg.Overflow == OverflowDrop {
			s.mu.Unlock()
			s.dropped.Add(1)
			s.srv.stats.dropped[dropQueueFull].Add(1)
			return false
		}
		s.closeLocked(reasonSlow(s.srv.cfg.QueueBytes), true)
		s.mu.Unlock()
		s.dropped.Add(1)
		s.srv.stats.dropped[dropClosing].Add(1)
		return false
	}
	s.pushLocked(frame)
	s.mu.Unlock()
	s.delivered.Add(1)
	return true
}

// reply queues a frame the client asked for (a response, a pong). It is
// never dropped: a client that does not read its answers is disconnected.
func (s *session) reply(frame []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return
	}
	if s.bytes > 0 && s.bytes+len(frame) > s.srv.cfg.QueueBytes {
		s.closeLocked(reasonSlow(s.srv.cfg.QueueBytes), true)
		return
	}
	s.pushLocked(frame)
}

func (s *session) pushLocked(frame []byte) {
	s.frames = append(s.frames, frame)
	s.bytes += len(frame)
	if s.waiting {
		s.waiting = false
		s.wake <- struct{}{} // capacity 1 and only the parked writer drains it
	}
}

// close stops accepting frames. With discard the queue is thrown away (a
// slow consumer, a violation); without it the writer writes what is
// queued first (a drain). The writer then sends r's close frame.
func (s *session) close(r closeReason, discard bool) {
	s.mu.Lock()
	s.closeLocked(r, discard)
	s.mu.Unlock()
}

func (s *session) closeLocked(r closeReason, discard bool) {
	if s.closing {
		return
	}
	s.closing, s.discard, s.reason = true, discard, r
	if r.label != "" {
		s.srv.stats.disconnects(r.label)
	}
	if s.waiting {
		s.waiting = false
		s.wake <- struct{}{}
	}
	if discard && s.nc != nil {
		// A writer stuck on a full socket gives up now. Deadlines are
		// safe to set from any goroutine.
		_ = s.nc.SetWriteDeadline(time.Now())
	}
}

// next waits for frames and swaps the queue with spare; ok is false once
// the session is closing and nothing more is to be written. done ends the
// wait early (an SSE request's context); tick, when not nil, returns an
// empty batch on every tick (SSE keep-alives). Called by the writer only.
func (s *session) next(spare [][]byte, done <-chan struct{}, tick <-chan time.Time) (batch [][]byte, ok bool) {
	s.mu.Lock()
	for len(s.frames) == 0 || s.discard {
		if s.closing {
			s.frames = nil
			s.mu.Unlock()
			return nil, false
		}
		s.waiting = true
		s.mu.Unlock()
		select {
		case <-s.wake:
		case <-done:
			s.close(closeReason{}, true)
		case <-tick:
			s.mu.Lock()
			if s.waiting {
				s.waiting = false
				s.mu.Unlock()
				return spare[:0], true
			}
			s.mu.Unlock()
			<-s.wake // a pusher cleared waiting and is sending
		}
		s.mu.Lock()
	}
	batch, s.frames = s.frames, spare[:0]
	s.mu.Unlock()
	return batch, true
}

// wrote accounts for a written batch and returns it, emptied, as the
// next spare.
func (s *session) wrote(batch [][]byte) [][]byte {
	n := 0
	for _, f := range batch {
		n += len(f)
	}
	s.mu.Lock()
	s.bytes -= n
	s.mu.Unlock()
	s.written.Add(uint64(len(batch)))
	s.writtenBytes.Add(uint64(n))
	s.srv.stats.writtenBytes.Add(uint64(n))
	clear(batch)
	if cap(batch) > 4096 {
		return nil // do not keep a burst's backlog capacity forever
	}
	return batch[:0]
}

// queued returns the queue depth in frames and bytes.
func (s *session) queued() (frames, bytes int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.frames), s.bytes
}

// closeState returns why the session is closing, if it is.
func (s *session) closeState() (closeReason, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reason, s.closing
}

// detachAll leaves every topic. Called by the reader goroutine at the end.
func (s *session) detachAll() {
	for name, t := range s.topics {
		t.detach(s)
		s.srv.hub.release(t)
		delete(s.topics, name)
	}
	s.ntopics.Store(0)
}
