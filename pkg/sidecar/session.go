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
// (topic pumps, the reader answering requests, forwarded calls); one writer
// at a time empties it. A WebSocket writer is a goroutine that runs only
// while frames are queued, so an idle client holds no writer stack; an SSE
// writer is the request's handler, parked on wake.
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

	// mu protects the queue and the writer's state.
	mu      sync.Mutex
	frames  [][]byte
	bytes   int         // bytes queued and being written
	closing bool        // no frame is accepted any more
	discard bool        // while closing: drop the queued frames instead of writing them
	reason  closeReason // why the session is closing
	writing bool        // WebSocket: the writer goroutine runs
	waiting bool        // SSE: the writer is parked on wake
	wake    chan struct{}

	// WebSocket only, set before the session is added to the Server.
	flush   func()         // the writer goroutine's body, which calls writers.Done
	writers sync.WaitGroup // the writer goroutine, while it runs

	// Owned by the reader goroutine (the SSE handler for SSE).
	topics map[string]*topic
}

func newSession(srv *Server, kind sessionKind, remote string) *session {
	s := &session{
		srv:    srv,
		id:     srv.nextSession.Add(1),
		kind:   kind,
		remote: remote,
		since:  time.Now(),
		topics: make(map[string]*topic),
	}
	if kind == kindSSE {
		s.wake = make(chan struct{}, 1)
	}
	return s
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
	s.startWriterLocked()
	if s.waiting {
		s.waiting = false
		s.wake <- struct{}{} // capacity 1 and only the parked writer drains it
	}
}

// startWriterLocked starts a WebSocket session's writer goroutine unless
// it runs. Only take stops it (with s.mu held, when the queue is empty),
// so there is never more than one writer.
func (s *session) startWriterLocked() {
	if s.flush == nil || s.writing {
		return
	}
	s.writing = true
	s.writers.Add(1) // flush calls Done
	go s.flush()
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
	s.startWriterLocked() // it sends the close frame and closes the connection
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

// maxSpare is the largest array of frames a writer keeps for reuse.
const maxSpare = 4096

// idleQueueCap is the largest queue array an idle WebSocket session keeps
// for its next frames; a burst's larger array goes back to the heap.
const idleQueueCap = 16

// take hands a WebSocket writer the queued frames and puts spare in their
// place. An empty batch means there is nothing to write: if closing is
// true the writer sends the close frame and closes the connection, and no
// writer starts again; otherwise, with stop, the writer is marked stopped
// and must return at once (the next frame starts another).
func (s *session) take(spare [][]byte, stop bool) (batch [][]byte, closing bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.frames) > 0 && !s.discard {
		batch, s.frames = s.frames, spare[:0]
		return batch, false
	}
	if s.closing {
		s.frames = nil
		return nil, true
	}
	if stop {
		s.writing = false
		if cap(s.frames) > idleQueueCap {
			s.frames = nil
		}
	}
	return nil, false
}

// next waits for frames and swaps the queue with spare; ok is false once
// the session is closing and nothing more is to be written. done ends the
// wait early (an SSE request's context); tick, when not nil, returns an
// empty batch on every tick (SSE keep-alives). Called by the SSE writer only.
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
	if cap(batch) > maxSpare {
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
