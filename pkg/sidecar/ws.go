package sidecar

import (
	"context"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
	"go.uber.org/zap"

	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// serveRoot upgrades WebSocket requests on "/" and serves the status
// page to anything else.
func (s *Server) serveRoot(w http.ResponseWriter, r *http.Request) {
	if websocket.IsWebSocketUpgrade(r) {
		s.serveWS(w, r)
		return
	}
	s.serveStatusPage(w, r)
}

// serveWS upgrades the request, starts the session's reader goroutine
// and returns: net/http's connection state (its 4 KiB buffers, the
// request) and its handler stack are then released, so an idle client
// costs its connection, a small read buffer and one shallow goroutine.
func (s *Server) serveWS(w http.ResponseWriter, r *http.Request) {
	ws, err := s.upg.Upgrade(w, r, nil)
	if err != nil {
		return // the upgrader has answered
	}
	c := newWSConn(ws, r.RemoteAddr, &s.wsCfg)
	c.s.marks = protocol.WantsGapNotices(r)
	c.s.token = requestToken(r)
	c.s.trace = s.hub.tracer.remote(r)
	if protocol.WantsStamps(r) {
		c.s.enc = wsStamped
	}
	if reason, ok := s.register(c.s); !ok {
		c.refuse(reason)
		return
	}
	go c.serve()
}

// wsConfig is what every WebSocket session is built from; New makes the
// one they share.
type wsConfig struct {
	*Config // read only: the limits and timeouts, the session's too
	// live holds the settings a reload changes: MaxBatch,
	// MaxCallsPerClient (read when a client connects).
	live   *atomic.Pointer[liveSettings]
	wire   protocol.Server // the dialect spoken to local clients
	subIDs bool            // the dialect acknowledges a subscription with an id (Ethereum)
	// noticeTopic is the exchange's notice channel (Thalex's system),
	// answered by the sidecar itself; "" for none.
	noticeTopic string
	// renamed is the venue's own name of methods others spell
	// differently (venue.Exchange.Renamed), named when one is refused.
	renamed map[string]string
	stats   *stats
	hub     *hub
	tracer  tracer // the spans of forwarded calls
	// ctx is the parent of subscribe waits; it ends when the Server
	// closes. callsCtx is the parent of forwarded calls: it ends sooner,
	// when a drain has waited for them long enough (Server.Shutdown),
	// with errShuttingDown as its cause.
	ctx      context.Context
	callsCtx context.Context
	feed     func(context.Context) (client.Holder, error) // the source's: where calls are forwarded (source.feed)
	clients  *registry                                    // the session leaves it when it ends
	log      *zap.Logger
}

// wsConn is a WebSocket session's transport: the connection, its reader
// goroutine, which answers the client's requests, and its writer
// goroutine, which runs only while frames are queued.
type wsConn struct {
	s        *session
	cfg      *wsConfig
	ws       *websocket.Conn
	nc       net.Conn       // the write deadline cuts a stuck write short
	raw      rawWriter      // nc's descriptor, for session.offer's direct writes (tryWrite)
	readDone chan struct{}  // closed when the reader has ended
	flush    func()         // writeLoop as a value: go flush() allocates nothing, go c.writeLoop() would
	writers  sync.WaitGroup // the writer goroutine, while it runs
	rpc      sync.WaitGroup // forwarded calls in flight, waited for by the reader when it ends
	inflight atomic.Int32   // the same calls, counted for a drain (waitCalls)
	calls    chan struct{}  // semaphore of forwarded calls

	// callMu protects the context of forwarded calls, made by the first
	// one and cancelled when the reader ends.
	callMu      sync.Mutex
	callCtx     context.Context
	cancelCalls context.CancelFunc
	callsEnded  bool // endCalls ran

	// Made by the reader's first subscription request (queueOp): the
	// subscription goroutine's queue and the context of its subscribes,
	// cancelled when the reader ends. opsMu protects opsRunning: whether
	// a subscription goroutine runs; opsWG counts it.
	ops        chan func()
	opsCtx     context.Context
	cancelOps  context.CancelFunc
	opsMu      sync.Mutex
	opsRunning bool
	opsWG      sync.WaitGroup

	hbMu sync.Mutex // protects hb
	hb   *time.Timer
}

// newWSConn wraps an upgraded connection and builds its session.
func newWSConn(ws *websocket.Conn, remote string, cfg *wsConfig) *wsConn {
	c := &wsConn{cfg: cfg, ws: ws, nc: ws.NetConn(), readDone: make(chan struct{}),
		calls: make(chan struct{}, cfg.live.Load().maxCallsPerClient)}
	c.flush = c.writeLoop
	c.raw.init(c.nc)
	c.s = newSession(remote, cfg.Config, cfg.stats, cfg.hub, c)
	ws.SetReadLimit(0) // frames are limited in readLoop, with a clear close reason
	ws.SetPingHandler(func(data string) error {
		c.s.reply(controlFrame(websocket.PongMessage, []byte(data)))
		return nil
	})
	ws.SetPongHandler(func(string) error { return nil })
	ws.SetCloseHandler(func(code int, _ string) error {
		c.s.close(reasonPeerClosed, false) // answer after what is queued
		return nil
	})
	return c
}

func (c *wsConn) kind() sessionKind { return kindWS }

// wake starts the writer goroutine; the session calls it when the writer
// is idle, so there is never more than one.
func (c *wsConn) wake() {
	c.writers.Add(1) // writeLoop calls Done
	go c.flush()
}

// abort gives a writer stuck on a full socket up now. Deadlines are safe
// to set from any goroutine.
func (c *wsConn) abort() { _ = c.nc.SetWriteDeadline(time.Now()) }

// waitCalls waits for the forwarded calls in flight, or for ctx. It
// polls the count of calls (rpc's Wait may not run beside the reader's
// Add), on the rare path of a drain.
func (c *wsConn) waitCalls(ctx context.Context) {
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for c.inflight.Load() > 0 {
		select {
		case <-tick.C:
		case <-ctx.Done():
			return
		}
	}
}

// cut closes the connection, which unblocks the reader.
func (c *wsConn) cut() { _ = c.nc.Close() }

// refuse closes a connection the Server did not accept, with reason.
func (c *wsConn) refuse(reason closeReason) {
	_ = c.nc.SetWriteDeadline(time.Now().Add(time.Second))
	_, _ = c.nc.Write(closeFrame(reason.code, reason.text))
	_ = c.nc.Close()
}

// serve is the session's reader goroutine. It stays shallow, because an
// idle client's stack is mostly this goroutine parked in a read: the
// cold paths (ending the session, logging) live in functions of their own.
func (c *wsConn) serve() {
	c.readLoop()
	c.end()
}

// end ends the session once reading has ended: forwarded calls are
// cancelled, topics left, the writer sends what the close requires, and
// the connection is closed.
func (c *wsConn) end() {
	defer c.cfg.clients.remove(c.s)
	close(c.readDone)
	c.endCalls()
	c.stopOps()
	c.rpc.Wait()
	c.stopHeartbeat()
	c.s.unsubscribeAll()
	c.s.close(closeReason{}, true)
	c.writers.Wait()
	_ = c.nc.Close()
	if reason, _ := c.s.closeState(); reason.label != "" {
		c.cfg.log.Info("local client disconnected", zap.Uint64("client", c.s.id),
			zap.String("remote", c.s.remote), zap.String("reason", reason.text))
	}
}

// callContext returns the context of forwarded calls, making it on first
// use: most clients never forward a call. Called by the reader, and by
// the subscription goroutine for a batch array's calls.
func (c *wsConn) callContext() context.Context {
	c.callMu.Lock()
	defer c.callMu.Unlock()
	if c.callCtx == nil {
		c.callCtx, c.cancelCalls = context.WithCancel(c.cfg.callsCtx)
		if c.callsEnded { // a batch's call after the reader ended: it ends at once
			c.cancelCalls()
		}
	}
	return c.callCtx
}

// endCalls cancels the calls in flight, once the reader has ended.
func (c *wsConn) endCalls() {
	c.callMu.Lock()
	defer c.callMu.Unlock()
	c.callsEnded = true
	if c.cancelCalls != nil {
		c.cancelCalls()
	}
}

// tryWrite writes as much of frame as the socket takes now (rawWriter).
func (c *wsConn) tryWrite(frame []byte) int { return c.raw.tryWrite(frame) }

// writeLoop is the session's writer goroutine, which runs only while
// frames are queued (writeQueued). After the session closes it sends the
// close frame and closes the connection.
func (c *wsConn) writeLoop() {
	defer c.writers.Done()
	nc := c.nc
	timeout := c.cfg.WriteTimeout
	tail, closed := writeQueued(c.s, nc, timeout)
	if !closed {
		return // the next frame starts a writer again
	}
	if reason, _ := c.s.closeState(); reason.code != 0 {
		// Finish a frame cut short by a deadline (a slow consumer is cut
		// off at once) so the close frame that follows is readable.
		_ = nc.SetWriteDeadline(time.Now().Add(timeout))
		_, err := (&net.Buffers{tail, closeFrame(reason.code, reason.text)}).WriteTo(nc)
		if err == nil {
			// Give the peer a moment to answer the close before the
			// socket goes, so it reads the reason rather than a reset.
			select {
			case <-c.readDone:
			case <-time.After(time.Second):
			}
		}
	}
	_ = nc.Close() // unblocks the reader
}
