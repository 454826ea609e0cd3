package exchangetest

import (
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
	"go.uber.org/zap"

	"github.com/wsfan/wsfan/internal/batchconn"
	"github.com/wsfan/wsfan/internal/credit"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// queueLen is how many frames a connection's writer may have queued before
// Publish waits for it.
const queueLen = 1024

// readLimit is the largest frame the server accepts from a client.
const readLimit = 64 << 20

// outMsg is one frame queued for a connection's writer.
type outMsg struct {
	typ  int    // websocket.TextMessage or BinaryMessage
	data []byte // shared between connections; never modified
	due  time.Time
	// after runs on the writer goroutine just before the frame is written
	// (or discarded because the server is silent): it registers the
	// subscriptions this frame acknowledges, so notifications follow the
	// ack, and returns the frames to write right after it (the books'
	// snapshots a new subscriber gets first).
	after func() [][]byte
	// end closes the connection once the frame is written: the exchange
	// ends the session with it (venue.Exchange.ThrottleEndsSession).
	end bool
}

// conn is one client connection.
type conn struct {
	s    *Server
	id   int // numbers connections from 1 in accept order; set before the goroutines start
	ws   *websocket.Conn
	path string          // the URL path it upgraded on (venue.Exchange.ServedOn)
	bc   *batchconn.Conn // under ws: the writer corks it to batch frames
	out  chan outMsg     // to the writer goroutine
	done chan struct{}   // closed by close

	// notices: the handshake asked for wsfan's gap notices
	// (protocol.WantsGapNotices), which a replay sends (PublishGap). Set
	// before the goroutines start.
	notices bool

	closeOnce sync.Once

	// hbSet carries a new heartbeat interval (0: off) to the writer.
	// Only the writer goroutine sends on it (from outMsg.after).
	hbSet chan time.Duration
	// awaitingTest is set by the writer when it sent a heartbeat
	// test_request and cleared by the reader when public/test arrives.
	awaitingTest atomic.Bool

	// Owned by the reader goroutine.
	login login               // login.go: the exchange's login method succeeded
	limit credit.Bucket       // ratelimit.go: the requests' budget
	after []afterFunc         // subscription registrations for the response being built
	reqs  []protocol.Incoming // the requests of the frame being handled
	// ending is set when the response being built ends the session: the
	// connection closes once it is written, and reads nothing more.
	ending bool
}

func newConn(s *Server, ws *websocket.Conn, bc *batchconn.Conn, path string) *conn {
	c := &conn{
		s:     s,
		ws:    ws,
		path:  path,
		bc:    bc,
		out:   make(chan outMsg, queueLen),
		done:  make(chan struct{}),
		hbSet: make(chan time.Duration, 1),
		limit: s.bucket(),
	}
	ws.SetReadLimit(readLimit)
	ws.SetPingHandler(c.onPing)
	ws.SetCloseHandler(c.onClose)
	return c
}

// close closes the TCP connection at once (no close frame) and tells the
// writer to stop. The reader then fails and cleans up. Safe from any
// goroutine, idempotent.
func (c *conn) close() {
	c.closeOnce.Do(func() {
		close(c.done)
		_ = c.ws.NetConn().Close()
	})
}

// onPing answers a ping unless pongs are switched off. It runs on the
// reader goroutine; WriteControl may run concurrently with the writer.
func (c *conn) onPing(appData string) error {
	if c.s.noPongs.Load() || c.s.silent.Load() {
		return nil
	}
	err := c.ws.WriteControl(websocket.PongMessage, []byte(appData), time.Now().Add(time.Second))
	var ne net.Error
	if errors.Is(err, websocket.ErrCloseSent) || (errors.As(err, &ne) && ne.Timeout()) {
		return nil
	}
	return err
}

// onClose echoes a client's close frame unless the server is silent. It runs
// on the reader goroutine.
func (c *conn) onClose(code int, _ string) error {
	if c.s.silent.Load() {
		return nil
	}
	msg := websocket.FormatCloseMessage(code, "")
	_ = c.ws.WriteControl(websocket.CloseMessage, msg, time.Now().Add(time.Second))
	return nil
}

// readLoop is the connection's reader goroutine: it parses, records and
// handles every frame until the connection fails, then closes it.
func (c *conn) readLoop() {
	defer c.close()
	idle := c.s.wire.Venue().Keepalive.IdleLimit
	for {
		if idle > 0 { // the venue closes a silent client
			_ = c.ws.SetReadDeadline(time.Now().Add(idle))
		}
		typ, data, err := c.ws.ReadMessage()
		if err != nil {
			return
		}
		received := time.Now()
		if answer, ok := c.s.wire.AnswerKeepalive(data); ok {
			c.s.rec.add(c.id, data, received, nil)
			c.reply(answer)
			continue
		}
		if limit := c.s.ex.MaxRequestBytes; limit > 0 && len(data) > limit && c.s.ex.TooLarge != nil {
			// The exchange reads nothing of the frame: its answer
			// names no request.
			c.s.rec.add(c.id, data, received, nil)
			c.s.chg.notify()
			c.reply(c.s.ex.TooLarge(nil, received))
			continue
		}
		reqs, batch, ferr := c.s.wire.ParseFrame(c.reqs[:0], data)
		c.s.rec.add(c.id, data, received, reqs)
		c.s.chg.notify()
		if typ == websocket.TextMessage {
			serve(c, reqs, batch, ferr, received)
		}
		clear(reqs) // drop the requests' references until the next frame
		c.reqs = reqs[:0]
		if c.ending { // the writer closes the connection once the refusal is out
			<-c.done
			return
		}
	}
}

// send queues m for the writer. It waits while the queue is full and gives
// up when the connection closes or abort is closed (abort may be nil). It
// reports whether m was queued.
func (c *conn) send(m outMsg, abort <-chan struct{}) bool {
	select {
	case c.out <- m:
		return true
	default:
	}
	select {
	case c.out <- m:
		return true
	case <-c.done:
		return false
	case <-abort:
		return false
	}
}

// reply queues an RPC response from the reader goroutine, delayed by the
// server's response delay, with the registrations collected in c.after.
func (c *conn) reply(data []byte) {
	after := c.takeAfter()
	m := outMsg{typ: websocket.TextMessage, data: data, after: after, end: c.ending}
	if d := time.Duration(c.s.delay.Load()); d > 0 {
		m.due = time.Now().Add(d)
	}
	if !c.send(m, nil) && after != nil {
		after()
	}
}

// afterFunc registers what a response acknowledges; it returns a frame to
// write right after the response, or nil.
type afterFunc func() []byte

// takeAfter returns one func running every queued registration and
// collecting their frames, or nil.
func (c *conn) takeAfter() func() [][]byte {
	if len(c.after) == 0 {
		return nil
	}
	fns := c.after
	c.after = nil
	return func() [][]byte { return runAfter(fns) }
}

// runAfter runs fns and returns the frames they produced.
func runAfter(fns []afterFunc) [][]byte {
	var frames [][]byte
	for _, f := range fns {
		if frame := f(); frame != nil {
			frames = append(frames, frame)
		}
	}
	return frames
}

// sendAll queues frames from the reader goroutine, for registrations
// made without a response to follow.
func (c *conn) sendAll(frames [][]byte) {
	for _, f := range frames {
		c.send(outMsg{typ: websocket.TextMessage, data: f}, nil)
	}
}

// writeLoop is the connection's writer goroutine, the only one that writes
// data frames to ws. It also holds delayed responses and sends the
// heartbeats the client asked for (Deribit's public/set_heartbeat).
func (c *conn) writeLoop() {
	defer c.s.connWG.Done()
	defer c.close()

	var delayed []outMsg // FIFO of responses waiting for their due time
	delayTimer := time.NewTimer(time.Hour)
	delayTimer.Stop()
	defer delayTimer.Stop()

	var hbInterval time.Duration
	hbTimer := time.NewTimer(time.Hour)
	hbTimer.Stop()
	defer hbTimer.Stop()

	for {
		select {
		case <-c.done:
			return
		case m := <-c.out:
			// Write m and whatever else is queued already in one flush.
			c.bc.Cork()
			ok := c.writeOrDelay(m, &delayed, delayTimer)
		batch:
			for n := 1; ok && n < maxBatch; n++ {
				select {
				case m = <-c.out:
					ok = c.writeOrDelay(m, &delayed, delayTimer)
				default:
					break batch
				}
			}
			if c.bc.Flush() != nil || !ok {
				return
			}
		case <-delayTimer.C:
			for len(delayed) > 0 && time.Until(delayed[0].due) <= 0 {
				m := delayed[0]
				delayed[0] = outMsg{}
				delayed = delayed[1:]
				if !c.write(m) {
					return
				}
			}
			if len(delayed) > 0 {
				delayTimer.Reset(time.Until(delayed[0].due))
			}
		case d := <-c.hbSet:
			hbInterval = d
			c.awaitingTest.Store(false)
			hbTimer.Stop()
			if d > 0 {
				hbTimer.Reset(d)
			}
		case <-hbTimer.C:
			if c.awaitingTest.Load() {
				c.s.log.Info("heartbeat not answered: closing", zap.Int("conn", c.id))
				msg := websocket.FormatCloseMessage(websocket.ClosePolicyViolation, "heartbeat not answered")
				_ = c.ws.WriteControl(websocket.CloseMessage, msg, time.Now().Add(time.Second))
				return
			}
			if !c.s.silent.Load() {
				c.awaitingTest.Store(true)
				if c.ws.WriteMessage(websocket.TextMessage, c.s.heartbeat) != nil {
					return
				}
			}
			hbTimer.Reset(hbInterval)
		}
	}
}

// maxBatch caps how many frames the writer gathers into one flush.
const maxBatch = 256

// writeOrDelay writes m, or holds it in delayed when it is a response due
// later (or behind one that is). It runs on the writer goroutine and
// reports false when the connection failed.
func (c *conn) writeOrDelay(m outMsg, delayed *[]outMsg, timer *time.Timer) bool {
	if !m.due.IsZero() && (len(*delayed) > 0 || time.Until(m.due) > 0) {
		*delayed = append(*delayed, m)
		if len(*delayed) == 1 {
			timer.Reset(time.Until(m.due))
		}
		return true
	}
	return c.write(m)
}

// writeMessages writes data: a WebSocket message, or one for each
// message of a JSON text sequence (a protocol.TopicAnswering dialect's
// answers, protocol.EachMessage).
func (c *conn) writeMessages(typ int, data []byte) bool {
	if typ != websocket.TextMessage || len(data) == 0 || data[0] != protocol.RecordSeparator {
		return c.ws.WriteMessage(typ, data) == nil
	}
	ok := true
	protocol.EachMessage(data, func(msg []byte) {
		ok = ok && c.ws.WriteMessage(typ, msg) == nil
	})
	return ok
}

// write runs m.after, then writes m unless the server is silent. Running
// after first means a client that got an acknowledgement sees the
// subscription in Subscribers, while a notification published from now on
// is queued behind the acknowledgement. It runs on the writer goroutine and
// reports false when the connection failed.
func (c *conn) write(m outMsg) bool {
	var then [][]byte
	if m.after != nil {
		then = m.after()
	}
	if c.s.silent.Load() {
		return true
	}
	if !c.writeMessages(m.typ, m.data) {
		return false
	}
	for _, f := range then {
		if c.ws.WriteMessage(websocket.TextMessage, f) != nil {
			return false
		}
	}
	if m.end {
		_ = c.bc.Flush()
		c.s.log.Info("session ended after a refusal", zap.Int("conn", c.id))
		return false
	}
	return true
}

// setHeartbeat hands a new heartbeat interval to the writer, replacing one
// it has not picked up yet. Only the writer goroutine calls it.
func (c *conn) setHeartbeat(d time.Duration) {
	select {
	case <-c.hbSet:
	default:
	}
	c.hbSet <- d
}
