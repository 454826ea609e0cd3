package sidecar

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.uber.org/zap"

	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/protocol"
)

// readBufferSize is a WebSocket client's read buffer.
const readBufferSize = 512

// Server is a sidecar: one upstream client fanned out to local clients.
// New starts its upstream connection; Close (or Shutdown) must be called.
type Server struct {
	cfg     Config
	proto   protocol.Protocol
	dialect dialect
	log     *zap.Logger
	reg     *prometheus.Registry
	coll    *collector
	handler http.Handler
	upg     websocket.Upgrader

	hub   *hub
	up    *upstream
	stats stats

	nextSession atomic.Uint64

	// mu protects the following.
	mu       sync.Mutex
	sessions map[*session]struct{}
	draining bool

	ctx    context.Context // cancelled by Close
	cancel context.CancelFunc
	// wg counts the upstream and sampler goroutines and every session's
	// goroutines.
	wg        sync.WaitGroup
	closeOnce sync.Once
}

// New checks cfg, registers the metrics and starts connecting to the
// upstream in the background (readiness says when it is up). Serve the
// local side with ListenAndServe, Serve or Handler.
func New(cfg Config) (*Server, error) {
	cfg, proto, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	s := &Server{
		cfg:      cfg,
		proto:    proto,
		dialect:  dialectOf(proto.Name()),
		log:      cfg.Logger.With(zap.String("component", "sidecar"), zap.String("protocol", proto.Name())),
		reg:      cfg.Registry,
		sessions: make(map[*session]struct{}),
	}
	if s.reg == nil {
		s.reg = prometheus.NewRegistry()
		s.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	s.hub = newHub(s)
	opts := []client.Option{
		client.WithProtocol(proto),
		client.WithLogger(cfg.Logger),
		client.WithMetrics(s.reg, "upstream"),
		client.WithBufferSize(8192),
		client.WithRequestTimeout(cfg.RequestTimeout),
	}
	s.up = newUpstream(s, append(opts, cfg.UpstreamOptions...))
	s.coll = newCollector(s)
	if err := s.reg.Register(s.coll); err != nil {
		return nil, fmt.Errorf("sidecar: failed to register metrics: %w", err)
	}
	s.upg = websocket.Upgrader{
		// A small read buffer of its own: reusing the HTTP server's
		// (ReadBufferSize 0) would keep net/http's connection state,
		// 8 KiB of buffers, alive through it. Local clients send small
		// requests, and bufio reads a larger frame straight into the
		// message buffer. Writes never go through gorilla's buffer, so
		// the pool keeps idle clients from holding one.
		ReadBufferSize:  readBufferSize,
		WriteBufferPool: &sync.Pool{},
		CheckOrigin:     s.checkOrigin,
	}
	s.handler = s.routes()
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.wg.Add(2)
	go func() {
		defer s.wg.Done()
		s.up.run(s.ctx)
	}()
	go func() {
		defer s.wg.Done()
		s.sampleRates()
	}()
	return s, nil
}

// routes builds the HTTP handler.
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/{$}", s.serveRoot)
	mux.HandleFunc("/ws", s.serveWS)
	mux.HandleFunc("/v1/stream", s.serveSSE)
	mux.HandleFunc("/v1/status", s.serveStatus)
	mux.Handle("/metrics", promhttp.HandlerFor(s.reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("/healthz", s.serveHealthz)
	mux.HandleFunc("/readyz", s.serveReadyz)
	return requireToken(s.cfg.Token, mux, "/healthz", "/readyz")
}

// Handler returns the sidecar's HTTP handler, for embedding it in a
// server of one's own. The token check is included.
func (s *Server) Handler() http.Handler { return s.handler }

// Registry returns the registry /metrics serves.
func (s *Server) Registry() *prometheus.Registry { return s.reg }

// Addr returns the configured listen address.
func (s *Server) Addr() string { return s.cfg.Listen }

// ListenAndServe listens on Config.Listen and serves until ctx ends, then
// drains (see Shutdown) within Config.DrainTimeout and closes the Server.
func (s *Server) ListenAndServe(ctx context.Context) error {
	ln, err := net.Listen("tcp", s.cfg.Listen)
	if err != nil {
		s.Close()
		return fmt.Errorf("sidecar: failed to listen: %w", err)
	}
	return s.Serve(ctx, ln)
}

// Serve serves on ln until ctx ends, then drains within
// Config.DrainTimeout and closes the Server. It returns nil after a clean
// drain.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	s.log.Info("serving", zap.String("addr", ln.Addr().String()), zap.String("upstream", s.cfg.Upstream))
	hs := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          log.New(io.Discard, "", 0),
	}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()

	var err error
	select {
	case <-ctx.Done():
	case err = <-served:
		served <- err
	}
	dctx, cancel := context.WithTimeout(context.Background(), s.cfg.DrainTimeout)
	defer cancel()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // stops the listener and waits for the SSE handlers
		defer wg.Done()
		if hs.Shutdown(dctx) != nil {
			_ = hs.Close()
		}
	}()
	derr := s.Shutdown(dctx)
	wg.Wait()
	if serr := <-served; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	if err == nil {
		err = derr
	}
	return err
}

// Shutdown drains: new clients are refused, every local client gets what
// is queued for it and then a "going away" close frame, and the Server is
// closed once they are gone or ctx ends (then the rest are cut off). It
// returns ctx's error if the drain did not finish in time.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.draining = true
	sessions := s.sessionList()
	s.mu.Unlock()
	s.log.Info("draining", zap.Int("clients", len(sessions)))
	for _, ss := range sessions {
		ss.close(reasonShutdown, false)
	}
	var err error
	for {
		s.mu.Lock()
		n := len(s.sessions)
		s.mu.Unlock()
		if n == 0 {
			break
		}
		select {
		case <-ctx.Done():
			err = ctx.Err()
		case <-time.After(10 * time.Millisecond):
			continue
		}
		break
	}
	s.Close()
	return err
}

// Close cuts every local client off, closes the upstream client and waits
// for every goroutine the Server started. It is idempotent.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.draining = true
		sessions := s.sessionList()
		s.mu.Unlock()
		for _, ss := range sessions {
			ss.close(reasonShutdown, true)
			if ss.nc != nil {
				_ = ss.nc.Close()
			}
		}
		s.cancel()
		s.up.close()
		s.hub.close()
		s.wg.Wait()
		s.reg.Unregister(s.coll)
		s.log.Info("closed")
	})
}

// addSession registers a new session, or reports why it is refused.
func (s *Server) addSession(ss *session) (closeReason, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.draining {
		return reasonShutdown, false
	}
	if len(s.sessions) >= s.cfg.MaxClients {
		s.stats.disconnects(reasonTooManyClients(0).label)
		return reasonTooManyClients(s.cfg.MaxClients), false
	}
	s.sessions[ss] = struct{}{}
	s.stats.connections.Add(1)
	s.wg.Add(1) // done by removeSession
	return closeReason{}, true
}

func (s *Server) removeSession(ss *session) {
	s.mu.Lock()
	delete(s.sessions, ss)
	s.mu.Unlock()
	s.wg.Done()
}

// sessionList returns the sessions. s.mu must be held.
func (s *Server) sessionList() []*session {
	out := make([]*session, 0, len(s.sessions))
	for ss := range s.sessions {
		out = append(out, ss)
	}
	return out
}

// sampleRates updates every topic's message rate once a second.
func (s *Server) sampleRates() {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	last := time.Now()
	for {
		select {
		case <-s.ctx.Done():
			return
		case now := <-t.C:
			for _, tp := range s.hub.list() {
				tp.sample(now.Sub(last))
			}
			last = now
		}
	}
}
