package sidecar

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/wsfan/wsfan/pkg/client"
)

// sessionKind is how a local client is served; it picks the frame format
// a topic queues to the session.
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

// transport is how a session's queued frames reach its client, one
// implementation per way of serving (wsConn in ws.go, sseStream in
// sse.go), after centrifuge's Transport. The session logic (the queue, the
// topics) is written once above it. The session calls wake and abort with
// its mu held, so neither may block or call back into the session.
type transport interface {
	// kind names the transport for status and metrics.
	kind() sessionKind
	// wake has the idle writer look at the queue: frames were queued, or
	// the session began closing.
	wake()
	// abort makes a write in progress give up at once: the session is
	// closing and throws its queue away.
	abort()
	// cut closes the client's connection at once (Server.Close).
	cut()
	// tryWrite writes as much of frame as the socket takes without
	// waiting and returns how many bytes that was (0 when the transport
	// cannot write without its writer). The session calls it without mu,
	// only while the writer is stopped, so nothing else writes meanwhile.
	tryWrite(frame []byte) int
	// waitCalls waits until the client's forwarded calls have been
	// answered, or ctx ends (Server.Shutdown); a transport without calls
	// returns at once.
	waitCalls(ctx context.Context)
}

// session is one local client: a WebSocket connection or an SSE stream. Its
// queue is bounded in bytes and filled without blocking by any goroutine
// (topic pumps, the reader answering requests, forwarded calls); one writer
// at a time, the transport's, empties it. A session is built from the
// values it needs (the configuration, the counters, the hub it takes topics
// from, its transport), so it is tested alone.
type session struct {
	// Set when built, read only after.
	kind   sessionKind
	remote string
	since  time.Time
	cfg    *Config // QueueBytes, Overflow, MaxTopicsPerClient, RequestTimeout
	stats  *stats
	hub    *hub
	tr     transport
	// enc is how the session's topics frame their messages for it, set
	// by its transport from what the client asked for (encoding.go).
	enc *encoding
	// marks: the client gets the encoding's mark before the message
	// after a hole in a topic's stream (encoder.hole): SSE always, a
	// WebSocket client when it asked (protocol.WantsGapNotices).
	marks bool
	// resumeFrom is where the client resumes its topics' streams (SSE's
	// Last-Event-ID); nil for a fresh start.
	resumeFrom *resumePoint
	// token is the one the client authenticated with (requestToken),
	// nil when none was asked; a reload that removes it closes the
	// session (Server.Reload). Set by the transport before registering.
	token []byte
	// trace is the span context the client's HTTP request carried in
	// its traceparent header (tracer.remote): the parent of the spans
	// of its calls and subscribes; invalid for none, or tracing off.
	// Set by the transport before registering.
	trace trace.SpanContext
	id    uint64 // set by registry.add, before the session is shared

	// holes are the topics of which the session dropped a message for a
	// full queue (-overflow drop-newest) and has not got one since, for
	// a client that asked for marks, each with whether its mark is
	// queued; nholes counts them, so an offer to a session with none
	// pays an atomic load (dropnotice.go). holesMu protects holes.
	holesMu sync.Mutex
	holes   map[*topic]bool
	nholes  atomic.Int32

	// Counters: offered = delivered + dropped, exactly.
	delivered    atomic.Uint64 // frames queued
	dropped      atomic.Uint64 // frames not queued: full queue, or the session closing
	written      atomic.Uint64 // frames written to the connection
	writtenBytes atomic.Uint64
	ntopics      atomic.Int32 // len(topics), for the status page

	// mu protects the queue and the writer's state.
	mu      sync.Mutex
	frames  [][]byte
	box     *[][]byte   // holds frames in queueArrays; kept for the next Put
	bytes   int         // bytes queued and being written
	closing bool        // no frame is accepted any more
	discard bool        // while closing: drop the queued frames instead of writing them
	reason  closeReason // why the session is closing
	idle    bool        // the writer is stopped or parked: the next frame or close wakes it
	head    []byte      // the unwritten end of a frame offer began writing; written first, even when discarding

	// Owned by the session's subscription goroutine (a WebSocket
	// session's, see queueOp; an SSE stream's handler): the topics it
	// holds, and those reserved for it and not yet attached (a request's
	// while it waits for the upstream, a batch's until the batch is
	// answered), which count against its limit as held ones do.
	topics  map[string]*topic
	pending map[string]*topic

	refusalLog refusalLog // paces the lines logging its refusals (refusals.go)
}

func newSession(remote string, cfg *Config, st *stats, h *hub, tr transport) *session {
	return &session{
		kind:    tr.kind(),
		remote:  remote,
		since:   time.Now(),
		cfg:     cfg,
		stats:   st,
		hub:     h,
		tr:      tr,
		enc:     wsFrames,
		idle:    true,
		topics:  make(map[string]*topic),
		pending: make(map[string]*topic),
	}
}

// holds reports whether the session holds the topic keyed name or has
// it pending. Called by its subscription goroutine.
func (s *session) holds(name string) bool {
	return s.topics[name] != nil || s.pending[name] != nil
}

// holdsTopic reports whether the session holds t or has it pending.
// Called by its subscription goroutine.
func (s *session) holdsTopic(t *topic) bool {
	return s.topics[t.name] == t || s.pending[t.name] == t
}

// offer queues a notification frame without blocking and reports whether
// it was queued. A full queue drops it or closes the session, by policy.
// With direct, when the writer is stopped and nothing is queued, the frame
// is written from the caller's goroutine instead, as far as the socket
// takes it at once: starting a writer goroutine per client per message is
// what made the hop slow at modest rates (BenchmarkHopLatency). Topic
// pumps pass direct only while they are caught up, so under load the
// writers batch as before.
func (s *session) offer(frame []byte, direct bool) bool {
	return s.offerFrame(frame, nil, direct)
}

// offerFrame is offer of a frame that ends in slot, a send slot
// (stamps.go; nil for a complete frame): queued, the slot follows the
// frame in the queue and the writer fills it; written from here, the
// frame is completed in a copy of its own with the time now.
func (s *session) offerFrame(frame, slot []byte, direct bool) bool {
	s.mu.Lock()
	if direct && s.idle && s.bytes == 0 && !s.closing {
		s.idle = false // this goroutine is the writer until writeDirect returns
		s.mu.Unlock()
		if slot != nil {
			own := append(make([]byte, 0, len(frame)+len(slot)), frame...)
			frame = fillSendSlot(own, slot, time.Now().UnixNano())
		}
		s.writeDirect(frame)
		s.delivered.Add(1)
		return true
	}
	if s.closing {
		s.mu.Unlock()
		s.dropped.Add(1)
		s.stats.dropped[dropClosing].Add(1)
		return false
	}
	if s.bytes > 0 && s.bytes+len(frame)+len(slot) > s.cfg.QueueBytes {
		if s.cfg.Overflow == client.DropNewest {
			s.mu.Unlock()
			s.dropped.Add(1)
			s.stats.dropped[dropQueueFull].Add(1)
			return false
		}
		s.closeLocked(reasonSlow(s.cfg.QueueBytes), true)
		s.mu.Unlock()
		s.dropped.Add(1)
		s.stats.dropped[dropClosing].Add(1)
		return false
	}
	s.pushLocked(frame)
	if slot != nil {
		s.frames = append(s.frames, slot)
		s.bytes += len(slot)
	}
	s.mu.Unlock()
	s.delivered.Add(1)
	return true
}

// writeDirect writes frame through the transport now and hands what the
// socket did not take, and whatever was queued meanwhile, to the writer.
// The caller has marked the writer running (idle false) and holds no lock.
func (s *session) writeDirect(frame []byte) {
	n := s.tr.tryWrite(frame)
	s.writtenBytes.Add(uint64(n))
	s.stats.writtenBytes.Add(uint64(n))
	s.mu.Lock()
	defer s.mu.Unlock()
	if n == len(frame) {
		s.written.Add(1)
	} else {
		s.head = frame[n:]
		s.bytes += len(s.head)
	}
	s.idle = true
	if s.head != nil || len(s.frames) > 0 || s.closing {
		s.wakeLocked()
	}
}

// reply queues a frame the client asked for (a response, a pong). It is
// never dropped: a client that does not read its answers is disconnected,
// and so is one whose answer alone is larger than its queue may hold
// (close code 1009, saying so): no answer passes the bound the stream
// meets.
func (s *session) reply(frame []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return
	}
	if len(frame) > s.cfg.QueueBytes {
		s.closeLocked(reasonReplyTooLarge(len(frame), s.cfg.QueueBytes), true)
		return
	}
	if s.bytes > 0 && s.bytes+len(frame) > s.cfg.QueueBytes {
		s.closeLocked(reasonSlow(s.cfg.QueueBytes), true)
		return
	}
	s.pushLocked(frame)
}

func (s *session) pushLocked(frame []byte) {
	if cap(s.frames) == 0 {
		if box, _ := queueArrays.Get().(*[][]byte); box != nil {
			s.frames, *box, s.box = *box, nil, box
		}
	}
	s.frames = append(s.frames, frame)
	s.bytes += len(frame)
	s.wakeLocked()
}

// wakeLocked wakes the writer if it is idle. Only take makes it idle
// (with s.mu held, when the queue is empty), so one writer runs at a time.
func (s *session) wakeLocked() {
	if s.idle {
		s.idle = false
		s.tr.wake()
	}
}

// close stops accepting frames. With discard the queue is thrown away (a
// slow consumer, a violation); without it the writer writes what is
// queued first (a drain). The writer then ends the stream with r.
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
		s.stats.disconnects(r.label)
	}
	s.wakeLocked() // the writer ends the stream
	if discard {
		s.tr.abort()
	}
}

// maxSpare is the largest array of frames a writer keeps for reuse.
const maxSpare = 4096

// idleQueueCap is the largest queue array an idle session keeps for its
// next frames; a burst's larger array goes to queueArrays.
const idleQueueCap = 16

// queueArrays holds the queue arrays of sessions whose writers went idle
// after a burst, emptied and cleared, for the next session with nothing
// queued: a queue grown from nothing to a burst's size is reallocated at
// every doubling (BenchmarkFanOutPeers at 100 clients: 3 % of the
// process's CPU in growslice), while idle sessions keep no more than
// idleQueueCap.
var queueArrays sync.Pool // of *[][]byte; a session keeps the box of the array it took

// take hands the writer the queued frames and puts spare in their place.
// An empty batch means there is nothing to write: if closing is true the
// writer ends the stream, and it is never woken again; otherwise, with
// stop, the writer is marked idle and must stop or park at once (the next
// frame wakes it).
func (s *session) take(spare [][]byte, stop bool) (batch [][]byte, closing bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.head != nil {
		// A frame offer began: its end goes first, even when discarding,
		// so the close frame after it is readable.
		batch, s.head = append(spare[:0], s.head), nil
		if !s.discard {
			batch = append(batch, s.frames...)
			clear(s.frames)
			s.frames = s.frames[:0]
		}
		return batch, false
	}
	if len(s.frames) > 0 && !s.discard {
		batch, s.frames = s.frames, spare[:0]
		return batch, false
	}
	if s.closing {
		s.frames = nil
		return nil, true
	}
	if stop {
		s.idle = true
		if cap(s.frames) > idleQueueCap {
			if cap(s.frames) <= maxSpare {
				if s.box == nil {
					s.box = new([][]byte)
				}
				*s.box = s.frames[:0] // cleared: it came from wrote, or take cleared it
				queueArrays.Put(s.box)
				s.box = nil
			}
			s.frames = nil
		}
	}
	return nil, false
}

// resume marks an idle writer running again without a wake, and reports
// whether it was idle; if not, a wake is on its way to the writer.
func (s *session) resume() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.idle {
		return false
	}
	s.idle = false
	return true
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
	s.written.Add(uint64(s.countFrames(batch)))
	s.writtenBytes.Add(uint64(n))
	s.stats.writtenBytes.Add(uint64(n))
	clear(batch)
	if cap(batch) > maxSpare {
		return nil // do not keep a burst's backlog capacity forever
	}
	return batch[:0]
}

// countFrames is how many frames fs holds: a frame and the send slot
// after it are one.
func (s *session) countFrames(fs [][]byte) int {
	n := len(fs)
	if s.enc.stamped {
		for _, f := range fs {
			if isSendSlot(f) {
				n--
			}
		}
	}
	return n
}

// queued returns the queue depth in frames and bytes.
func (s *session) queued() (frames, bytes int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	frames = s.countFrames(s.frames)
	if s.head != nil {
		frames++
	}
	return frames, s.bytes
}

// closeState returns why the session is closing, if it is.
func (s *session) closeState() (closeReason, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reason, s.closing
}

// status returns the session's line of /v1/status.
func (s *session) status() ClientStatus {
	frames, bytes := s.queued()
	reason, _ := s.closeState()
	return ClientStatus{
		ID:          s.id,
		Kind:        s.kind.String(),
		Remote:      s.remote,
		Since:       s.since,
		Topics:      int(s.ntopics.Load()),
		QueueFrames: frames,
		QueueBytes:  bytes,
		Delivered:   s.delivered.Load(),
		Dropped:     s.dropped.Load(),
		Written:     s.written.Load(),
		Closing:     reason.text,
	}
}
