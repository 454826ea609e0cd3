package exchangetest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gorilla/websocket"
	"go.uber.org/zap"

	"github.com/wsfan/wsfan/internal/batchconn"
	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/venue"
)

// Server is a WebSocket server on 127.0.0.1 speaking one Dialect. Create it
// with NewServer and end it with Close. All methods are safe for concurrent
// use, except that Stop and Start must not race each other.
type Server struct {
	dialect Dialect
	wire    protocol.Server // the dialect's wire format
	ex      *venue.Exchange // how the exchange's servers behave beyond it
	login   venue.Authenticator
	// heartbeat is the dialect's heartbeat request; nil when it has none.
	heartbeat []byte
	cfg       config
	log       *zap.Logger

	// Fault knobs, read by the reader and writer goroutines.
	delay   atomic.Int64 // time.Duration added before every RPC response
	noPongs atomic.Bool
	silent  atomic.Bool

	// mu protects the following.
	mu       sync.Mutex
	addr     string // remembered across Stop and Start
	running  bool   // listening and accepting connections
	closed   bool   // Close was called; Start fails
	httpSrv  *http.Server
	conns    map[*conn]struct{}
	nextConn int
	handlers map[string]Handler
	refused  map[string]struct{}

	keys routingKeys // each subscribed topic's routing key, for PublishFrame (replay.go)

	// subMu protects the subscription table (publish.go).
	subMu sync.RWMutex
	subs  map[string]map[*conn][]string // topic → subscribed connections → Ethereum ids
	ethID map[string]ethSub             // Ethereum subscription id → owner

	rec recorder // record.go
	chg changes  // wait.go
	fd  feedCtl  // feed.go
	lv  liveFeed // books.go: the running feed's state, shared with subscribes

	// connWG counts the serve goroutine and every connection goroutine.
	connWG    sync.WaitGroup
	closeOnce sync.Once
}

// NewServer starts a server speaking d on 127.0.0.1 with a random port. It
// serves WebSocket upgrades on every path ("/ws" is the one URL returns). It
// panics if it cannot listen, like httptest.NewServer.
func NewServer(d Dialect, opts ...Option) *Server {
	s := &Server{
		cfg:      defaultConfig(),
		conns:    make(map[*conn]struct{}),
		handlers: make(map[string]Handler),
		refused:  make(map[string]struct{}),
		subs:     make(map[string]map[*conn][]string),
		ethID:    make(map[string]ethSub),
	}
	wire, err := protocol.ServerByName(string(d))
	if err != nil {
		panic(fmt.Sprintf("exchangetest: NewServer: %v", err))
	}
	s.dialect, s.wire = Dialect(wire.Name()), wire
	s.ex = venue.ByName(string(d))
	s.heartbeat = wire.AppendHeartbeat(nil)
	for _, o := range opts {
		o(&s.cfg)
	}
	s.login = s.cfg.login
	if s.login == nil && s.ex.Login != nil {
		s.login = s.ex.Login()
	}
	s.log = s.cfg.logger.With(zap.String("component", "exchangetest"), zap.Stringer("dialect", s.dialect))
	s.addr = cmp.Or(s.cfg.addr, "127.0.0.1:0")
	if err := s.Start(); err != nil {
		panic(fmt.Sprintf("exchangetest: failed to listen: %v", err))
	}
	return s
}

// Dialect returns the dialect the server speaks.
func (s *Server) Dialect() Dialect { return s.dialect }

// Addr returns the server's address, "127.0.0.1:PORT". It stays the same
// across Stop and Start.
func (s *Server) Addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addr
}

// URL returns the server's WebSocket URL, "ws://127.0.0.1:PORT/ws".
func (s *Server) URL() string { return "ws://" + s.Addr() + "/ws" }

// Start listens again on the same address after Stop, like an exchange
// coming back after a restart. It retries the bind for up to two seconds
// while the port is still held by the old socket. It returns nil if the
// server is already running and an error after Close.
func (s *Server) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errors.New("exchangetest: Start after Close")
	}
	if s.running {
		return nil
	}
	ln, err := listen(s.addr)
	if err != nil {
		return fmt.Errorf("exchangetest: failed to listen on %s: %w", s.addr, err)
	}
	s.addr = ln.Addr().String()
	srv := &http.Server{
		Handler:           http.HandlerFunc(s.serveWS),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          log.New(io.Discard, "", 0),
	}
	s.httpSrv = srv
	s.running = true
	s.connWG.Add(1)
	go func() { // the serve goroutine: owns ln until srv is closed
		defer s.connWG.Done()
		_ = srv.Serve(ln)
	}()
	s.log.Debug("listening", zap.String("addr", s.addr))
	s.chg.notify()
	return nil
}

// listen binds addr, retrying briefly while the port is in use (a restarted
// server racing the old socket's teardown).
func listen(addr string) (net.Listener, error) {
	// Go sets SO_REUSEADDR on listening sockets on Unix, so TIME_WAIT does
	// not block the bind; EADDRINUSE can still show up for a moment.
	deadline := time.Now().Add(2 * time.Second)
	for {
		ln, err := net.Listen("tcp", addr)
		if err == nil || !errors.Is(err, syscall.EADDRINUSE) || time.Now().After(deadline) {
			return ln, err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Stop closes the listener and every connection, like a killed exchange,
// and waits until their goroutines have ended. The address is kept for
// Start. Stop on a stopped server does nothing.
func (s *Server) Stop() {
	s.mu.Lock()
	if !s.running {
		s.mu.Unlock()
		return
	}
	s.running = false
	srv := s.httpSrv
	s.httpSrv = nil
	conns := s.connList()
	s.mu.Unlock()

	_ = srv.Close()
	for _, c := range conns {
		c.close()
	}
	s.connWG.Wait()
	s.log.Debug("stopped")
}

// Close stops the feed, the listener and every connection and waits for
// every goroutine the server started. It is idempotent.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		s.mu.Unlock()
		s.StopFeed()
		s.Stop()
	})
}

// DropConnections abruptly closes every current connection at the TCP
// level, without a close frame. The server keeps listening.
func (s *Server) DropConnections() {
	s.mu.Lock()
	conns := s.connList()
	s.mu.Unlock()
	for _, c := range conns {
		c.close()
	}
}

// Connections returns the number of open connections.
func (s *Server) Connections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// WaitConnections waits until exactly n connections are open.
func (s *Server) WaitConnections(ctx context.Context, n int) error {
	return s.chg.wait(ctx, func() (bool, string) {
		have := s.Connections()
		return have == n, fmt.Sprintf("%d connections, have %d", n, have)
	})
}

// connList returns the open connections. s.mu must be held.
func (s *Server) connList() []*conn {
	conns := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	return conns
}

var upgrader = websocket.Upgrader{
	ReadBufferSize:  32 << 10,
	WriteBufferSize: 32 << 10,
	CheckOrigin:     func(*http.Request) bool { return true },
}

// serveWS upgrades a request and then becomes the connection's reader
// goroutine.
func (s *Server) serveWS(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(r) {
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	s.mu.Lock()
	if !s.running {
		s.mu.Unlock()
		http.Error(w, "server stopped", http.StatusServiceUnavailable)
		return
	}
	s.connWG.Add(1)
	s.mu.Unlock()
	defer s.connWG.Done()

	// The upgrade runs over a batchconn, so the writer can send every
	// queued frame in one write(2).
	hj := &batchconn.Hijacker{ResponseWriter: w}
	ws, err := upgrader.Upgrade(hj, r, nil)
	if err != nil {
		return // the upgrader has answered the request
	}
	c := newConn(s, ws, hj.Hijacked(), r.URL.Path)
	c.notices = protocol.WantsGapNotices(r)

	s.mu.Lock()
	if !s.running {
		s.mu.Unlock()
		_ = ws.NetConn().Close()
		return
	}
	s.nextConn++
	c.id = s.nextConn
	s.conns[c] = struct{}{}
	s.connWG.Add(1)
	s.mu.Unlock()
	s.log.Debug("connection opened", zap.Int("conn", c.id), zap.String("remote", r.RemoteAddr))
	s.chg.notify()

	go c.writeLoop()
	c.readLoop()

	s.dropSubs(c)
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
	s.log.Debug("connection closed", zap.Int("conn", c.id))
	s.chg.notify()
}
