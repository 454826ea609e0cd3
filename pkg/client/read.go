package client

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"time"
	"unsafe"

	"github.com/gorilla/websocket"
	"go.uber.org/zap"

	"github.com/wsfan/wsfan/internal/pending"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// slabSize is the size of the buffers frames are read into. Frames are
// carved out of a slab one after another, so reading costs one allocation
// per slab rather than per frame; a message keeps its slab alive until the
// consumer drops it.
const slabSize = 64 << 10

// errOversized marks a frame over the read limit.
var errOversized = errors.New("frame over the read limit")

// readLoop is the reader goroutine: it reads every frame and routes it.
// It waits for a consumer only briefly before its overflow policy applies
// (subscription.go), or for as long as it takes under Block.
func (cn *conn) readLoop() {
	defer cn.wg.Done()
	c := cn.c
	for {
		typ, r, err := cn.ws.NextReader()
		if err != nil {
			cn.fail(cn.readError(err))
			return
		}
		data, err := cn.readFrame(r)
		now := cn.sock.frameTime() // the read that completed the frame (socket.go)
		if c.cfg.now != nil {
			now = c.cfg.now()
		}
		cn.lastRead.Store(now.UnixNano())
		switch {
		case errors.Is(err, errOversized):
			c.dropFrame(dropOversized, fmt.Errorf("%w (%d bytes)", err, c.cfg.readLimit), nil)
			cn.markLost(data)
			continue
		case err != nil:
			cn.fail(cn.readError(err))
			return
		case typ != websocket.TextMessage:
			c.dropFrame(dropBinary, errors.New("binary message"), data)
			continue
		}
		cn.took(data, now)
		if c.stalled.Load() { // a consumer held the reader up (subscription.go)
			c.stalled.Store(false)
			cn.armDeadline()
		}
	}
}

// readFrame reads one message into the slab. An oversized message is
// read to its end and discarded.
func (cn *conn) readFrame(r io.Reader) ([]byte, error) {
	limit := cn.c.cfg.readLimit
	if len(cn.slab) < 4096 {
		cn.slab = make([]byte, slabSize)
	}
	buf, n := cn.slab, 0
	for {
		if n == len(buf) {
			if int64(n) > limit {
				_, err := io.Copy(io.Discard, r)
				if err != nil {
					return nil, err
				}
				return buf[:min(n, lostHead)], errOversized // its head names its topic
			}
			grown := make([]byte, min(int64(2*len(buf)), limit+1))
			copy(grown, buf[:n])
			buf = grown
		}
		m, err := r.Read(buf[n:])
		n += m
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if int64(n) > limit {
		return buf[:min(n, lostHead)], errOversized
	}
	frame := buf[:n:n]
	if &buf[0] == &cn.slab[0] {
		cn.slab = cn.slab[n:]
	}
	return frame, nil
}

// lostHead is how much of a dropped oversized frame markLost searches
// for the topic it belonged to.
const lostHead = 4 << 10

// markLost tells the subscribers of the topic a dropped oversized frame
// belonged to that they missed a message: when exactly one subscribed
// routing key stands quoted in the frame's head (Thalex's channel_name,
// Deribit's params.channel and an Ethereum subscription id come before
// the payload; Ethereal's events name no key, and are not found), the
// topic's next message is flagged FlagGap and a Gap event raised. Runs
// on the reader goroutine, on the rare path of a dropped frame.
func (cn *conn) markLost(head []byte) {
	c := cn.c
	var lost *topicState
	matches := 0
	c.topics.eachRoute(func(key string, ts *topicState) bool {
		i := bytes.Index(head, []byte(key))
		if i > 0 && i+len(key) < len(head) && head[i-1] == '"' && head[i+len(key)] == '"' {
			lost = ts
			matches++
		}
		return matches < 2
	})
	if matches != 1 {
		return
	}
	lost.lost.Store(true)
	c.stats.gaps.Add(1)
	c.emit(Event{Kind: Gap, Topic: lost.name})
}

// took hands a text frame read at now to the tap, cuts a sidecar's
// stamps off it (WithStamps) and handles it. It runs on the reader
// goroutine.
func (cn *conn) took(data []byte, now time.Time) {
	c := cn.c
	if c.cfg.tap != nil {
		c.cfg.tap.FrameRead(cn.info, data, now)
	}
	var st stamps
	if c.cfg.stamps {
		data, st = cutStamps(data)
	}
	cn.handleFrame(data, now, st)
}

// handleFrame classifies one frame and acts on it. It runs on the reader
// goroutine; nothing here blocks (unless a subscription's policy is Block).
// st are a sidecar's stamps (stamps.go): with them, the venue's stamp
// is not read again.
func (cn *conn) handleFrame(data []byte, now time.Time, st stamps) {
	c := cn.c
	c.stats.frames.Add(1)
	c.stats.bytes.Add(uint64(len(data)))
	if c.cfg.copyFilter != nil { // a composite's leg: a copy another leg delivered (copyfilter.go)
		if cp, drop := c.cfg.copyFilter(data, now); drop {
			cn.tookCopy(cp, now)
			cn.unread(data)
			return
		}
	}
	f := &cn.frame
	f.WantTime = c.cfg.stamps && st.upstream == 0
	if err := c.proto.Classify(data, f); err != nil {
		if !cn.takeGapNotice(data) {
			c.dropFrame(dropMalformed, err, data)
		}
		return
	}
	switch f.Kind {
	case protocol.KindNotification:
		if f.Time != 0 {
			st.venue = f.Time
		}
		cn.route(f.Key, f.Data, f.Snapshot, now, st)
	case protocol.KindResponse:
		cn.resolve(f, data)
	case protocol.KindBatch:
		err := protocol.EachElement(data, func(elem []byte) bool {
			if err := c.proto.Classify(elem, &cn.elem); err != nil || cn.elem.Kind != protocol.KindResponse {
				c.dropFrame(dropMalformed, errBatchElement, elem)
				return true
			}
			cn.resolve(&cn.elem, elem)
			return true
		})
		if err != nil {
			c.dropFrame(dropMalformed, err, data)
		}
	case protocol.KindHeartbeat:
		cn.answerHeartbeat()
	case protocol.KindKeepalive:
		// The answer to the writer's keepalive: the venue is there.
	case protocol.KindEnded:
		c.endedByServer(string(f.Key), bytes.Clone(f.Data))
	case protocol.KindEvent:
		// A user's own subscription to the events' channel (Thalex's
		// system) gets them too.
		if _, ok := c.topics.route(unsafe.String(unsafe.SliceData(f.Key), len(f.Key))); ok && len(f.Key) > 0 {
			cn.route(f.Key, f.Data, false, now, st)
		}
		switch f.Event {
		case protocol.EventReconnect:
			c.log.Info("server announced a reconnect; reconnecting now")
			c.emit(Event{Kind: ServerNotice})
			cn.fail(ErrServerReconnect)
		}
	default:
		if !cn.takeGapNotice(data) {
			c.dropFrame(dropUnrouted, errUnknownKind, data)
		}
	}
}

// route delivers a notification to every subscription of its topic.
func (cn *conn) route(key, data []byte, snapshot bool, now time.Time, st stamps) {
	c := cn.c
	ts, ok := c.topics.route(unsafe.String(unsafe.SliceData(key), len(key)))
	if !ok {
		if c.topics.justLeft(unsafe.String(unsafe.SliceData(key), len(key)), now) {
			c.stats.dropped[dropUnrouted].Add(1) // in flight when the topic was left: expected
			return
		}
		c.dropFrame(dropUnrouted, errNoTopic, key)
		return
	}
	if h := c.handover.Load(); h != nil { // two connections carry the topics (handover.go)
		h.offer(cn, ts, data, snapshot, now, st)
		return
	}
	cn.deliver(ts, data, snapshot, now, st)
}

// deliver hands a notification of ts to its subscriptions, with the
// flags of its place in the topic and its times.
func (cn *conn) deliver(ts *topicState, data []byte, snapshot bool, now time.Time, st stamps) {
	c := cn.c
	if every := c.cadenceEvery; every >= 0 {
		ts.cadence.Observe(now.UnixNano(), every)
	}
	var flags Flags
	if snapshot {
		flags |= FlagSnapshot
	}
	if ts.resumed.Load() {
		ts.resumed.Store(false)
		flags |= FlagReconnected
	}
	if ts.lost.Load() { // a frame of the topic was dropped (markLost), or a sidecar said so
		ts.lost.Store(false)
		flags |= FlagGap
	}
	if ts.stale.Load() {
		ts.stale.Store(false)
		flags |= FlagStale
	}
	if ts.backfilled.Load() { // behind a sidecar that fetched what a reconnect missed
		ts.backfilled.Store(false)
		flags |= FlagBackfilled | FlagReconnected
	}
	var place uint64 // the message's, when read here (Sink)
	if ts.topic.Sequenced {
		var f Flags
		f, place = cn.checkSequence(ts, data)
		flags |= f
	}
	subs := ts.subs.Load()
	if subs == nil {
		return
	}
	msg := Message{Topic: ts.name, Data: data, Flags: flags, RecvTime: now}
	if st != (stamps{}) {
		st.fill(&msg)
		if st.venue != 0 && c.metrics != nil {
			c.metrics.delays.observe(ts, now.UnixNano(), st.venue)
		}
	}
	if ts.rec != nil { // a node's heads and logs (recovery.go)
		at, ok := c.pass(ts, &msg)
		if !ok {
			return
		}
		if place == 0 { // a change id stays the place
			place = at
		}
	}
	// The loop of deliverAll, kept here: the hot path pays no call.
	var delivered uint64
	for _, s := range *subs {
		if s.deliver(msg, place) {
			delivered++
		}
	}
	c.stats.delivered.Add(delivered)
}

// deliverAll hands msg to every subscription of subs (route's own loop,
// for the recovery's deliveries of held and fetched messages, on the
// supervisor).
func deliverAll(c *Client, subs *[]*Subscription, msg Message) {
	var delivered uint64
	for _, s := range *subs {
		if s.deliver(msg, 0) {
			delivered++
		}
	}
	c.stats.delivered.Add(delivered)
}

// checkSequence compares a sequenced topic's change id with the previous
// one and reports a gap, or a snapshot: a message that names no previous
// change (Deribit's "snapshot"), or, for a SnapshotFirst topic, the first
// after the topic was subscribed (Ethereal sends the whole L2Book first,
// marked by nothing else); it returns the change id too (0: none read).
// Runs on the reader goroutine, which owns lastID.
func (cn *conn) checkSequence(ts *topicState, data []byte) (Flags, uint64) {
	c := cn.c
	id, prev, ok := c.proto.Sequence(data)
	if !ok {
		return 0, 0
	}
	last := ts.lastID
	ts.lastID = id
	if prev == protocol.Unchained {
		// A change that names nothing before it: only its place tells
		// a whole book (the first after a subscribe) from a change.
		if ts.topic.SnapshotFirst && (last == 0 || ts.resubscribed.Swap(false)) {
			return FlagSnapshot, id
		}
		return 0, id
	}
	if prev == 0 {
		ts.resubscribed.Store(false)
		return FlagSnapshot, id
	}
	if ts.topic.SnapshotFirst && last == 0 {
		return FlagSnapshot, id
	}
	// After a resubscribe, changes the server sent before it read the
	// unsubscribe still chain to the last message; the first message
	// that does not is the fresh snapshot. (Ethereal acknowledges
	// nothing, so only the chain tells them apart: a snapshot that
	// happens to chain is applied as a change, which over a book that
	// was right leaves it right.)
	if ts.topic.SnapshotFirst && ts.resubscribed.Load() && prev != last {
		ts.resubscribed.Store(false)
		return FlagSnapshot, id
	}
	if last == 0 || prev == last {
		return 0, id
	}
	c.stats.gaps.Add(1)
	c.emit(Event{Kind: Gap, Topic: ts.name})
	if c.cfg.resubscribeGap {
		c.refreshTopic(ts)
	}
	return FlagGap, id
}

// resolve hands a response to the call waiting for it. An answer without
// an id answers the oldest request still waiting (see attribute).
func (cn *conn) resolve(f *protocol.Frame, raw []byte) {
	c := cn.c
	if f.Error != nil && c.venue.Errors != nil {
		c.noteSessionEnd(parseRPCError(f.Error))
	}
	var p *pending.Call
	switch {
	case f.HasID && c.venue.TopicAcks == nil:
		if p = cn.pending.Take(f.ID); p == nil {
			c.dropFrame(dropUnknownID, errNoCall, raw)
			return
		}
	case f.HasID: // a request may be answered topic by topic (OKX)
		var found bool
		if p, found = cn.pending.TakeAnswered(f.ID, f); p == nil {
			if !found {
				c.dropFrame(dropUnknownID, errNoCall, raw)
			}
			return // one topic of it answered, others still due
		}
	case f.Error != nil && c.answers.Load() == answersRefusalsOnly && cn.refuseAmbiguous(f):
		return
	case f.Error != nil || f.Result != nil:
		if p = cn.attribute(f); p == nil {
			c.dropFrame(dropUnknownID, errNoID, raw)
			return
		}
	default:
		c.dropFrame(dropUnknownID, errNoID, raw)
		return
	}
	if p.Owed() { // the late answer to a request given up on, as a late answer with an id
		c.dropFrame(dropUnknownID, errNoCall, raw)
		return
	}
	if p.To != nil {
		p.To.Answer(f, nil)
		return
	}
	if p.Done == nil {
		return
	}
	if f.Error != nil {
		c.stats.rpcErrors.Add(1)
		p.Done <- pending.Response{Err: parseRPCError(f.Error)}
		return
	}
	p.Done <- pending.Response{Result: f.Result}
}

// attribute finds the request an answer without an id answers. Deribit
// answers a request it cannot read as one (a frame over its size limit)
// with an error that has no id; Ethereal answers every event with a status
// frame, {"ok":…}, that has none. The rule: the servers wsfan speaks
// answer a connection's requests in the order they arrive (Deribit,
// Thalex, go-ethereum and Ethereal read a connection's frames one after
// the other), and ids are handed out in the order requests are queued, so
// the answer is the oldest request's still waiting: the smallest pending
// id with a waiter. An error fails that request at once with the server's
// message instead of letting it time out; errors are counted
// (wsfan_client_rpc_errors_without_id_total) and logged once a
// connection. It runs on the reader goroutine.
func (cn *conn) attribute(f *protocol.Frame) *pending.Call {
	c := cn.c
	id, p := cn.pending.TakeOldest()
	if p == nil {
		return nil
	}
	f.ID, f.HasID = id, true
	if f.Error == nil {
		c.answers.Store(answersAll)
		return p
	}
	c.stats.idlessErrors.Add(1)
	if !cn.idlessLogged {
		cn.idlessLogged = true
		c.log.Warn("the server answered with an error without an id; failing the oldest request waiting (further ones are counted, not logged)",
			zap.Uint64("id", id), zap.String("error", truncate(f.Error, 200)))
	}
	return p
}

// What a server whose answers carry no id was seen to answer
// (Client.answers).
const (
	answersUnknown      int32 = iota // nothing yet: answers are taken in order
	answersAll                       // it answered a success: every request is answered, in order
	answersRefusalsOnly              // a request went unanswered: only refusals are
)

// refuseAmbiguous handles a refusal without an id from a server that
// answers only refusals, while two or more requests wait: nothing says
// which one it refuses, so each is taken as refused, with the server's
// reason and a note saying so, rather than one picked by order and
// perhaps wrongly. It reports false, doing nothing, when at most one
// request waits. It runs on the reader goroutine.
func (cn *conn) refuseAmbiguous(f *protocol.Frame) bool {
	waiting := cn.pending.TakeWaitingIfMany()
	if waiting == nil {
		return false
	}
	c := cn.c
	c.stats.idlessErrors.Add(1)
	e := parseRPCError(f.Error)
	e.Message = fmt.Sprintf("%s (the server named no request and %d were waiting: each is taken as refused)", e.Message, len(waiting))
	c.log.Warn("the server refused one of several requests without saying which; failing them all",
		zap.Int("requests", len(waiting)), zap.String("error", truncate(f.Error, 200)))
	for _, p := range waiting {
		p.Fail(e)
	}
	return true
}

// answerHeartbeat replies to a server's test request at once, on the
// credits kept for it (pacer.chargeHeartbeat); the reply's response is
// expected and discarded.
func (cn *conn) answerHeartbeat() {
	cn.c.cfg.pace.ChargeHeartbeat()
	id := cn.c.nextID()
	if cn.pending.Add(id, &pending.Call{}) != nil {
		return
	}
	buf := getBuffer()
	*buf = cn.c.proto.HeartbeatReply((*buf)[:0], id)
	if cn.send(*buf, buf, 0) != nil {
		cn.pending.Remove(id)
	}
}

// Why frames are dropped, for the drop log.
var (
	errBatchElement = errors.New("batch element is not a response")
	errUnknownKind  = errors.New("frame of unknown kind")
	errNoTopic      = errors.New("notification for no subscribed topic")
	errNoID         = errors.New("response without a usable id")
	errNoCall       = errors.New("response to no pending call")
)

// dropFrame counts a dropped frame and logs the 1st, 2nd, 4th, 8th ...
// drop of each reason: bad input is always visible in the log and never
// floods it, and counting costs no clock read.
func (c *Client) dropFrame(reason int, err error, data []byte) {
	n := c.stats.dropped[reason].Add(1)
	if n&(n-1) != 0 {
		return
	}
	c.log.Warn("dropped frame",
		zap.String("reason", dropReasonNames[reason]),
		zap.Error(err),
		zap.Uint64("dropped_total", n),
		zap.String("sample", truncate(data, 200)))
}

// readError names why reading stopped.
func (cn *conn) readError(err error) error {
	if lerr := cn.livenessError(err); lerr != nil {
		return lerr
	}
	var ce *websocket.CloseError
	if errors.As(err, &ce) {
		return fmt.Errorf("server closed the connection: %w", err)
	}
	return fmt.Errorf("read: %w", err)
}
