package sidecar

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/gorilla/websocket"
	"go.uber.org/zap"
)

// serveRoot upgrades WebSocket requests on "/" and describes the sidecar
// to anything else.
func (s *Server) serveRoot(w http.ResponseWriter, r *http.Request) {
	if websocket.IsWebSocketUpgrade(r) {
		s.serveWS(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprintf(w, "wsfan sidecar (%s): WebSocket on / and /ws, SSE on /v1/stream?topic=..., /v1/status, /metrics, /healthz, /readyz\n",
		s.proto.Name())
}

// serveWS upgrades the request and becomes the session's reader
// goroutine; it starts the session's writer goroutine.
func (s *Server) serveWS(w http.ResponseWriter, r *http.Request) {
	ws, err := s.upg.Upgrade(w, r, nil)
	if err != nil {
		return // the upgrader has answered
	}
	nc := ws.NetConn()
	ss := newSession(s, kindWS, r.RemoteAddr)
	ss.nc = nc
	if reason, ok := s.addSession(ss); !ok {
		_ = nc.SetWriteDeadline(time.Now().Add(time.Second))
		_, _ = nc.Write(closeFrame(reason.code, reason.text))
		_ = nc.Close()
		return
	}
	defer s.removeSession(ss)

	ctx, cancel := context.WithCancel(s.ctx)
	c := &wsConn{session: ss, ws: ws, ctx: ctx, readDone: make(chan struct{}),
		calls: make(chan struct{}, s.cfg.MaxCallsPerClient)}
	ws.SetReadLimit(0) // frames are limited in readLoop, with a clear close reason
	ws.SetPingHandler(func(data string) error {
		ss.reply(controlFrame(websocket.PongMessage, []byte(data)))
		return nil
	})
	ws.SetPongHandler(func(string) error { return nil })
	ws.SetCloseHandler(func(code int, _ string) error {
		ss.close(reasonPeerClosed, false) // answer after what is queued
		return nil
	})

	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		c.writeLoop()
	}()
	c.readLoop()
	close(c.readDone)

	cancel() // ends forwarded calls
	c.rpc.Wait()
	c.stopHeartbeat()
	ss.detachAll()
	ss.close(closeReason{}, true)
	<-writerDone
	_ = nc.Close()
	if reason, _ := ss.closeState(); reason.label != "" {
		s.log.Info("local client disconnected", zap.Uint64("client", ss.id),
			zap.String("remote", ss.remote), zap.String("reason", reason.text))
	}
}

// wsConn is a WebSocket session's connection-side state.
type wsConn struct {
	*session
	ws       *websocket.Conn
	ctx      context.Context // cancelled when the reader ends
	readDone chan struct{}   // closed when the reader has ended
	rpc      sync.WaitGroup  // forwarded calls in flight
	calls    chan struct{}   // semaphore of forwarded calls

	hbMu sync.Mutex // protects hb
	hb   *time.Timer
}

// readLoop reads frames until the connection fails or the session closes.
func (c *wsConn) readLoop() {
	limit := c.srv.cfg.MaxFrameBytes
	for {
		typ, r, err := c.ws.NextReader()
		if err != nil {
			var ce *websocket.CloseError
			if !errors.As(err, &ce) && !errors.Is(err, net.ErrClosed) && !errors.Is(err, io.EOF) {
				c.srv.log.Debug("local client read failed", zap.Uint64("client", c.id), zap.Error(err))
			}
			c.close(closeReason{}, true)
			return
		}
		if typ != websocket.TextMessage {
			c.close(reasonBinary, true)
			return
		}
		data, err := io.ReadAll(io.LimitReader(r, limit+1))
		if err != nil {
			c.close(closeReason{}, true)
			return
		}
		if int64(len(data)) > limit {
			c.close(reasonFrameTooLarge(limit), true)
			return
		}
		c.handle(data)
		if _, closing := c.closeState(); closing {
			return
		}
	}
}

// writeLoop is the session's writer goroutine: it writes every queued
// frame in one writev(2), then the close frame, and closes the connection.
func (c *wsConn) writeLoop() {
	nc := c.nc
	var spare [][]byte
	var bufs net.Buffers
	var tail []byte // the unwritten end of a frame cut by a failed write
	timeout := c.srv.cfg.WriteTimeout
	for {
		batch, ok := c.next(spare, nil, nil)
		if !ok {
			break
		}
		bufs = append(bufs[:0], batch...)
		_ = nc.SetWriteDeadline(time.Now().Add(timeout))
		n, err := bufs.WriteTo(nc) // writev(2) on TCP; consumes bufs
		if err != nil {
			tail = unwrittenTail(batch, n)
		}
		spare = c.wrote(batch)
		if err != nil {
			c.close(closeReason{}, true)
			break
		}
	}
	if reason, _ := c.closeState(); reason.code != 0 {
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

// unwrittenTail returns the rest of the frame that a write of n bytes of
// batch stopped in, or nil if it stopped between frames.
func unwrittenTail(batch [][]byte, n int64) []byte {
	for _, f := range batch {
		if n < int64(len(f)) {
			if n == 0 {
				return nil
			}
			return f[n:]
		}
		n -= int64(len(f))
	}
	return nil
}
