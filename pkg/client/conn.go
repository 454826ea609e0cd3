package client

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"github.com/wsfan/wsfan/internal/endpoints"
	"github.com/wsfan/wsfan/internal/pending"
	"github.com/wsfan/wsfan/internal/redact"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// conn is one WebSocket connection and its two goroutines: the reader,
// which owns every read and the frame-routing state, and the writer, which
// owns every write (gorilla allows one writer at a time). A conn is never
// reused: when it fails, the supervisor makes a new one.
type conn struct {
	c       *Client
	ws      *websocket.Conn
	sock    *socket // gathers the writer's batches into one write(2), stamps the reads
	pending *pending.Table

	// wmu protects queue and closed. Any goroutine may queue frames; the
	// writer takes the whole queue at once and writes it in one flush.
	wmu    sync.Mutex
	queue  []outFrame
	closed bool
	wake   chan struct{} // capacity 1: "the queue is not empty"

	failOnce sync.Once
	cause    error         // why the connection ended; set before done closes
	done     chan struct{} // closed when the connection has failed
	wg       sync.WaitGroup

	lastRead atomic.Int64 // unix nanoseconds of the last frame, for the idle watchdog

	info ConnInfo // which connection this is, for a FrameTap; set when built

	// settings are the session settings made on this connection (the
	// program's, the on-connect hook's, and those made again after a
	// reconnect): while one holds, the client does not close the
	// connection by choice (a handover).
	settings sessionSettings

	// Owned by the reader goroutine.
	frame        protocol.Frame
	elem         protocol.Frame // a batch element
	slab         []byte         // free tail of the current read slab
	idlessLogged bool           // an error without an id was logged (read.go, attribute)
	lagging      bool           // a Lagging event was raised and the lag has not eased since (liveness.go)
	answered     time.Time      // the send time of the last ping answered, or when liveness started (liveness.go)
	copyTopic    *topicState    // the topic of the last copy the CopyFilter dropped (copyfilter.go)
}

// outFrame is a queued message; pooled buffers return to bufPool once
// written. call is the request id of a call's frame (0 for others), by
// which a caller that gave up takes it back (unqueue).
type outFrame struct {
	data   []byte
	pooled *[]byte
	call   uint64
}

// dial opens a connection and starts its goroutines.
func (c *Client) dial(ctx context.Context) (*conn, error) {
	return c.dialEndpoint(ctx, c.eps.Current())
}

// dialEndpoint dials endpoint ep (an index of c.eps): it waits for the
// connect pace, makes the WebSocket handshake within the dial timeout
// (handshake), and starts the connection's goroutines (startConn).
func (c *Client) dialEndpoint(ctx context.Context, epIndex int) (*conn, error) {
	if err := c.paceConnect(ctx, c.eps.Get(epIndex).URL); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, c.cfg.dialTimeout)
	defer cancel()
	ws, sock, err := c.handshake(ctx, c.eps.Get(epIndex))
	if err != nil {
		return nil, err
	}
	return c.startConn(ws, sock, epIndex), nil
}

// handshake opens a socket to ep and makes its WebSocket handshake
// within ctx over it (socket.go: the writer's batches, the reads'
// stamps). A failure is dialError's.
func (c *Client) handshake(ctx context.Context, ep endpoints.Endpoint) (*websocket.Conn, *socket, error) {
	var sock *socket
	// gorilla watches ctx only through the deadline it sets on the socket:
	// a cancelled ctx (Close, or the caller's) would leave the handshake
	// blocked on a server that accepted TCP and never answers until the
	// dial timeout. Closing the socket when ctx ends makes both prompt.
	stop := func() bool { return true }
	d := c.dialer
	netDial := d.NetDialContext
	if netDial == nil {
		netDial = (&net.Dialer{}).DialContext
	}
	dialCtx := ctx // not gorilla's, which ends when DialContext returns
	d.NetDialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		nc, err := netDial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		stop = context.AfterFunc(dialCtx, func() { _ = nc.Close() })
		sock = newSocket(nc)
		return sock, nil
	}
	ws, resp, err := d.DialContext(ctx, ep.URL, ep.Header)
	if !stop() && err == nil {
		// ctx ended just as the handshake completed: the socket is closed.
		_ = ws.Close()
		err = ctx.Err()
	}
	if err != nil {
		return nil, nil, c.dialError(ctx, ep, resp, err)
	}
	if resp != nil && resp.Body != nil {
		_ = resp.Body.Close() // the handshake response has no body worth reading
	}
	return ws, sock, nil
}

// dialError is the error of a failed handshake with ep: its URL
// redacted, the server's HTTP status when it answered, and ErrTimeout
// when the dial timeout ran out.
func (c *Client) dialError(ctx context.Context, ep endpoints.Endpoint, resp *http.Response, err error) error {
	// The URL may hold a provider's key: errors show it redacted,
	// gorilla's own *url.Error (a malformed URL) included.
	shown := ep.Shown
	var ue *url.Error
	if errors.As(err, &ue) {
		ue.URL = redact.URL(ue.URL)
	}
	if resp != nil {
		return fmt.Errorf("failed to dial %s: %w (HTTP %s)", shown, err, resp.Status)
	}
	// gorilla sets ctx's deadline on the socket, which may expire a
	// moment before ctx does: a socket timeout is the dial timeout too.
	var ne net.Error
	timedOut := errors.Is(ctx.Err(), context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
	if timedOut && c.ctx.Err() == nil {
		// The socket's own error (an i/o timeout, or "use of closed
		// network connection" once ctx closed it) says nothing more.
		return fmt.Errorf("failed to dial %s: no answer to the connection or its WebSocket handshake within the dial timeout %v: %w",
			shown, c.cfg.dialTimeout, ErrTimeout)
	}
	return fmt.Errorf("failed to dial %s: %w", shown, err)
}

// startConn makes the connection of a socket whose handshake is done
// (ws over sock, to endpoint epIndex) and starts its reader and writer
// goroutines.
func (c *Client) startConn(ws *websocket.Conn, sock *socket, epIndex int) *conn {
	// The read limit is enforced per frame by readFrame, which discards an
	// oversized frame and keeps the connection.
	ws.SetReadLimit(0)

	cn := &conn{
		c:       c,
		ws:      ws,
		sock:    sock,
		pending: pending.NewTable(),
		wake:    make(chan struct{}, 1),
		done:    make(chan struct{}),
		info:    ConnInfo{Client: c.seq, Conn: c.conns.Add(1), Endpoint: c.eps.Shown(epIndex)},
	}
	now := time.Now()
	cn.lastRead.Store(now.UnixNano())
	cn.startLiveness(now)
	cn.wg.Add(2)
	go cn.readLoop()
	go cn.writeLoop()
	return cn
}

// fail ends the connection once: it records the cause, closes the socket
// (which stops the reader), stops the writer and fails every pending call
// outside any lock. Any goroutine may call it.
func (cn *conn) fail(cause error) {
	cn.failOnce.Do(func() {
		cn.cause = cause
		close(cn.done)
		cn.wmu.Lock()
		cn.closed = true
		cn.queue = nil
		cn.wmu.Unlock()
		if errors.Is(cause, ErrClosed) {
			_ = cn.ws.WriteControl(websocket.CloseMessage,
				websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second))
		}
		_ = cn.ws.Close()
		callErr := cause
		if !errors.Is(cause, ErrClosed) {
			callErr = fmt.Errorf("%w: %w", ErrConnectionLost, cause)
		}
		cn.pending.FailAll(callErr)
	})
}

// wait blocks until the reader and writer have exited.
func (cn *conn) wait() { cn.wg.Wait() }

// failed reports whether cn has failed (or been closed).
func (cn *conn) failed() bool {
	select {
	case <-cn.done:
		return true
	default:
		return false
	}
}

// send queues one frame for the writer; call is the request id of a
// call's frame, else 0.
func (cn *conn) send(data []byte, pooled *[]byte, call uint64) error {
	cn.wmu.Lock()
	if cn.closed {
		cn.wmu.Unlock()
		return fmt.Errorf("%w: %w", ErrConnectionLost, cn.cause)
	}
	cn.queue = append(cn.queue, outFrame{data: data, pooled: pooled, call: call})
	cn.wmu.Unlock()
	cn.signal()
	return nil
}

// unqueue takes back the request of call id if the writer has not taken
// it yet, so a request whose caller gave up is never written late (its
// buffer goes back to the pool). Only a call that ended early scans the
// queue.
func (cn *conn) unqueue(id uint64) {
	cn.wmu.Lock()
	defer cn.wmu.Unlock()
	for i, f := range cn.queue {
		if f.call == id {
			cn.queue = append(cn.queue[:i], cn.queue[i+1:]...)
			if f.pooled != nil {
				putBuffer(f.pooled)
			}
			return
		}
	}
}

// sendAll queues frames to go out together, in order, in one flush.
func (cn *conn) sendAll(frames [][]byte) error {
	cn.wmu.Lock()
	if cn.closed {
		cn.wmu.Unlock()
		return fmt.Errorf("%w: %w", ErrConnectionLost, cn.cause)
	}
	for _, f := range frames {
		cn.queue = append(cn.queue, outFrame{data: f})
	}
	cn.wmu.Unlock()
	cn.signal()
	return nil
}

func (cn *conn) signal() {
	select {
	case cn.wake <- struct{}{}:
	default:
	}
}

// writeLoop is the writer goroutine: it writes queued frames in batches,
// sends pings and the dialect's keepalive, and runs the idle watchdog.
func (cn *conn) writeLoop() {
	defer cn.wg.Done()
	cfg := &cn.c.cfg

	var ping, idle, keep <-chan time.Time
	if cfg.pingInterval > 0 {
		t := time.NewTicker(cfg.pingInterval)
		defer t.Stop()
		ping = t.C
	}
	if ka := cn.c.venue.Keepalive; ka.Interval > 0 {
		t := time.NewTicker(ka.Interval)
		defer t.Stop()
		keep = t.C
	}
	if cfg.idleTimeout > 0 {
		t := time.NewTicker(max(cfg.idleTimeout/4, time.Millisecond))
		defer t.Stop()
		idle = t.C
	}
	var batch []outFrame
	for {
		select {
		case <-cn.done:
			return
		case <-cn.wake:
			// Callers woken together (the reader resolves a burst of
			// responses at once) are runnable now. When one frame is
			// queued and other calls are in flight, yielding once lets
			// them queue their next requests before the batch is taken,
			// so they share one write(2) instead of paying one each. A
			// lone call, or a batch already gathered, is written at once:
			// the yield costs a scheduling round when the process is busy.
			if cn.queueLen() == 1 && cn.pending.Len() > 1 {
				runtime.Gosched()
			}
			cn.wmu.Lock()
			batch, cn.queue = cn.queue, batch[:0]
			cn.wmu.Unlock()
			err := cn.writeBatch(batch)
			for i := range batch {
				if p := batch[i].pooled; p != nil {
					putBuffer(p)
				}
				batch[i] = outFrame{}
			}
			if err != nil {
				cn.fail(fmt.Errorf("write: %w", err))
				return
			}
		case <-keep:
			if err := cn.writeBatch([]outFrame{{data: cn.c.venue.Keepalive.Frame}}); err != nil {
				cn.fail(fmt.Errorf("keepalive: %w", err))
				return
			}
		case now := <-ping:
			if err := cn.sendPing(now); err != nil {
				cn.fail(fmt.Errorf("ping: %w", err))
				return
			}
		case now := <-idle:
			if silent := now.Sub(time.Unix(0, cn.lastRead.Load())); silent > cfg.idleTimeout {
				cn.fail(fmt.Errorf("%w: no frame for %v", ErrDeadPeer, silent.Round(time.Millisecond)))
				return
			}
		}
	}
}

func (cn *conn) queueLen() int {
	cn.wmu.Lock()
	defer cn.wmu.Unlock()
	return len(cn.queue)
}

// writeBatch writes frames as WebSocket messages in one flush.
func (cn *conn) writeBatch(frames []outFrame) error {
	if len(frames) == 0 {
		return nil
	}
	if err := cn.ws.SetWriteDeadline(time.Now().Add(cn.c.cfg.writeTimeout)); err != nil {
		return err
	}
	cn.sock.Cork()
	for _, f := range frames {
		if err := cn.ws.WriteMessage(websocket.TextMessage, f.data); err != nil {
			_ = cn.sock.Flush()
			return err
		}
	}
	if tap := cn.c.cfg.tap; tap != nil {
		now := time.Now()
		for _, f := range frames {
			tap.FrameWritten(cn.info, f.data, now)
		}
	}
	return cn.sock.Flush()
}

// bufPool recycles request buffers between callers and the writer.
var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 256); return &b }}

func getBuffer() *[]byte { return bufPool.Get().(*[]byte) }

func putBuffer(b *[]byte) {
	if cap(*b) > 64<<10 {
		return
	}
	*b = (*b)[:0]
	bufPool.Put(b)
}
