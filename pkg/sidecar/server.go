package sidecar

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.uber.org/zap"
	"golang.org/x/net/netutil"

	"github.com/wsfan/wsfan/internal/redact"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/record"
	"github.com/wsfan/wsfan/pkg/venue"
)

// fdHeadroom is the descriptors a sidecar needs beside its clients': the
// upstream, the listener, NATS, logs, idle HTTP connections.
const fdHeadroom = 64

// minTokenLen is the shortest token a sidecar off loopback takes without
// a warning.
const minTokenLen = 16

// The bounds of a topic's upstream buffer, in messages and in bytes of
// their data.
const (
	upstreamBuffer       = 1024
	upstreamPendingBytes = 4 << 20
)

// connectionMargin is how many connections beyond Config.MaxClients the
// listener accepts at once: plain requests, and clients being refused.
const connectionMargin = 128

// headerTimeout bounds the reading of a request's header, counted from
// the connection's start or the request's first byte: a connection that
// never sends one is closed after it (at once, when idle a second while
// the listener is full: idleconns.go).
const headerTimeout = 10 * time.Second

// readBufferSize is a WebSocket client's read buffer.
const readBufferSize = 512

// Server is a sidecar: one upstream client fanned out to local clients.
// New starts its upstream connection; Close (or Shutdown) must be called.
type Server struct {
	cfg     Config // validated by New; read only after
	proto   protocol.Protocol
	log     *zap.Logger
	reg     *prometheus.Registry
	coll    *collector
	delays  *delays
	origins logOnce // the refused origins logged
	handler http.Handler
	upg     websocket.Upgrader
	stats   stats
	// published counts the messages published on every topic: the
	// sequence of SSE event ids, which streamID (this process's start
	// time) prefixes.
	published atomic.Uint64
	addr      atomic.Pointer[string] // the listener's address, once Serve has it
	streamID  string

	statusCache statusCache // the status streams' shared event (statuspage.go)

	// live holds the settings a reload changes (reload.go), read on each
	// use; reloadMu serialises reloads and protects applied, the running
	// configuration with its defaults (cfg as New took it, before any
	// reload).
	live     atomic.Pointer[liveSettings]
	reloadMu sync.Mutex
	applied  Config

	src     source           // the upstream held here, or a NATS group's
	rec     *record.Recorder // Config.Record's; nil without
	hub     *hub
	clients *registry
	conns   *idleConns  // the listener's connections, idle ones reaped when it is full (Serve)
	guard   *tokenGuard // paces wrong tokens by address (auth.go)
	wsCfg   wsConfig    // what every WebSocket session shares

	ctx    context.Context // cancelled by Close
	cancel context.CancelFunc
	// callsCtx is the parent of forwarded calls; cutCalls ends it with
	// errShuttingDown once a drain has waited for them (Shutdown).
	callsCtx context.Context
	cutCalls context.CancelCauseFunc
	// wg counts the upstream and sampler goroutines.
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
		cfg:   cfg,
		proto: proto,
		log:   cfg.Logger.With(zap.String("component", "sidecar"), zap.String("protocol", proto.Name())),
		reg:   cfg.Registry,
	}
	hosts, err := newHostAllowlist(cfg.AllowedHosts, cfg.Listen, &s.stats.hostRefusals, s.log)
	if err != nil {
		return nil, err
	}
	s.applied = cfg
	s.live.Store(newLiveSettings(&cfg, offeredTopics(proto, cfg.Topics), hosts))
	if short := shortestToken(cfg.Token); short > 0 && !isLoopback(cfg.Listen) && short < minTokenLen {
		s.log.Warn("a token is short for a sidecar off loopback: anyone who reaches the port may guess it; use 32 random characters or more",
			zap.Int("length", short), zap.String("listen", cfg.Listen))
	}
	// Every local client holds a descriptor, and so does the upstream,
	// the listener and each idle keep-alive connection.
	if limit := descriptorLimit(); limit > 0 && uint64(cfg.MaxClients)+fdHeadroom > limit {
		s.log.Warn("-max-clients is above what the open-file limit allows: clients past it are refused by the kernel, not by the sidecar; raise the limit (ulimit -n) or lower -max-clients",
			zap.Int("max_clients", cfg.MaxClients), zap.Uint64("open_files_limit", limit))
	}
	if hosts.off {
		s.log.Warn("the Host check is off (allowed hosts *): a web page whose domain resolves to this machine can use the sidecar (DNS rebinding)")
	}
	if s.reg == nil {
		s.reg = prometheus.NewRegistry()
		s.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	// The Server wires its parts and owns their lifetimes; each part is
	// built from the values it needs, and none holds the Server. A frame
	// walks one way: upstream (upstream.go) → the topic's goroutine,
	// started by the hub (hub.go) → topic.publish (topic.go) →
	// session.offer (session.go) → the transport's writer (ws.go, sse.go).
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.callsCtx, s.cutCalls = context.WithCancelCause(s.ctx)
	s.streamID = strconv.FormatInt(time.Now().UnixNano(), 36)
	opts := []client.Option{
		client.WithProtocol(proto),
		client.WithLogger(cfg.Logger),
		client.WithMetrics(s.reg, "upstream"),
		// A topic's pump offers each message to its subscribers without
		// waiting, so its upstream buffer only absorbs bursts: at most
		// 1,024 messages and 4 MiB of their data, of which an idle topic
		// holds only the channel's 64 slots (the rest is allocated while
		// the pump is behind: BenchmarkIdleTopicMemory, 12 KB a topic
		// where the whole 1,024 cost 99 KB).
		client.Buffer(upstreamBuffer),
		client.PendingBytes(upstreamPendingBytes),
		client.WithRequestTimeout(cfg.RequestTimeout),
		// A forwarded call is never made again on a new connection: the
		// sidecar cannot know its program's deadline (forward.go).
		client.WithReadOnlyRetry(false),
		// Every message's venue stamp, for programs that ask for it
		// (stamps.go).
		client.WithStamps(),
	}
	if cfg.RateLimit > 0 {
		opts = append(opts, client.WithRateLimit(client.RateLimit{Rate: cfg.RateLimit, Burst: cfg.RateBurst}))
	}
	if len(cfg.UpstreamHeader) > 0 {
		opts = append(opts, client.WithHeader(cfg.UpstreamHeader))
	}
	opts = append(opts, cfg.upstreamLiveness()...)
	if len(cfg.Fallbacks) > 0 {
		opts = append(opts, client.WithEndpoints(cfg.Fallbacks...))
	}
	if cfg.Record != "" {
		// Every frame of the upstream, every leg of a standby's, into
		// one recording (pkg/record); closed after the upstream.
		if s.rec, err = record.New(cfg.Record, proto, record.Options{Private: cfg.RecordPrivate, Logger: s.log}); err != nil {
			s.cancel()
			return nil, fmt.Errorf("failed to start recording: %w", err)
		}
		opts = append(opts, client.WithFrameTap(s.rec))
	}
	opts = append(opts, cfg.UpstreamOptions...)
	s.delays = newDelays(cfg.NATS != "")
	if cfg.NATS != "" {
		s.src = newNATSSource(&s.cfg, opts, &s.stats, s.log)
	} else {
		s.src = newUpstream(cfg.Upstream, cfg.HotStandby, opts, &s.stats, s.log)
	}
	wire, err := protocol.ServerByName(proto.Name())
	if err != nil {
		s.cancel()
		return nil, err
	}
	tcfg := topicConfig{wire: wire, cache: cfg.LastMessageCache, stats: &s.stats, seq: &s.published,
		stream: s.streamID, resync: s.src.resync, log: s.log, noBooks: cfg.NATS != "", delays: s.delays,
		history: historyLimit{messages: cfg.SSEHistory, bytes: cfg.SSEHistoryBytes}}
	if s.rec != nil {
		tcfg.flagged = s.rec.Flagged // what the programs are told of holes, recorded too
	}
	s.hub = newHub(s.ctx, &s.cfg, &s.live, proto, s.src.feed, tcfg, s.log)
	if n, ok := s.src.(*natsSource); ok {
		n.onDown = s.hub.holeStarts // a hole is told when it starts (holestart.go)
	}
	s.clients = newRegistry(cfg.MaxClients, &s.stats)
	s.conns = newIdleConns(cfg.MaxClients + connectionMargin)
	s.guard = newTokenGuard(s.log, s.ctx.Done())
	ex := venue.ByName(proto.Name())
	s.wsCfg = wsConfig{Config: &s.cfg, wire: wire, subIDs: wire.SubscriptionID() != "", noticeTopic: ex.NoticeTopic, renamed: ex.Renamed, stats: &s.stats, hub: s.hub,
		tracer: s.hub.tracer, ctx: s.ctx, callsCtx: s.callsCtx, feed: s.src.feed, clients: s.clients, log: s.log, live: &s.live}
	s.coll = newCollector(&s.stats, s.hub, s.clients, s.src.state, s.conns, s.guard)
	if err := s.reg.Register(s.coll); err != nil {
		s.cancel()
		return nil, fmt.Errorf("failed to register metrics: %w", err)
	}
	if err := s.reg.Register(s.delays); err != nil {
		s.reg.Unregister(s.coll)
		s.cancel()
		return nil, fmt.Errorf("failed to register metrics: %w", err)
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
		Error: func(w http.ResponseWriter, r *http.Request, status int, reason error) {
			if status == http.StatusForbidden && r.Header.Get("Origin") != "" && !s.checkOrigin(r) {
				s.refuseOrigin(w, r)
				return
			}
			httpRefusal(w, status, reason.Error(), nil)
		},
	}
	s.handler = s.routes()
	s.wg.Add(2)
	go func() {
		defer s.wg.Done()
		s.src.run(s.ctx)
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
	mux.HandleFunc("/v1/book", s.serveBook)
	mux.HandleFunc("/v1/book/stream", s.serveBookStream)
	mux.HandleFunc("/v1/status", s.serveStatus)
	mux.HandleFunc("/v1/status/stream", s.serveStatusStream)
	mux.Handle("/metrics", promhttp.HandlerFor(s.reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("/healthz", s.serveHealthz)
	mux.HandleFunc("/readyz", s.serveReadyz)
	// The Host check comes first, for every path: a rebound page is
	// refused before anything else answers it; then a page of another
	// site without an allowed origin; the token applies on top.
	tc := &tokenCheck{live: &s.live, open: []string{"/healthz", "/readyz"}, refused: &s.stats.tokenRefusals, guard: s.guard, log: s.log}
	return wrapHosts(&s.live, s.refuseCrossSite(tc.wrap(mux)))
}

// Handler returns the sidecar's HTTP handler, for embedding it in a
// server of one's own. The Host check (Config.AllowedHosts: add the names
// the server is reached by) and the token check are included.
func (s *Server) Handler() http.Handler { return s.handler }

// Registry returns the registry /metrics serves.
func (s *Server) Registry() *prometheus.Registry { return s.reg }

// Addr returns the address the Server listens on: the listener's once
// Serve (or ListenAndServe) has it, so a Listen of 127.0.0.1:0 reads as
// the port the system chose; the configured Config.Listen before.
func (s *Server) Addr() string {
	if a := s.addr.Load(); a != nil {
		return *a
	}
	return s.cfg.Listen
}

// ListenAndServe listens on Config.Listen and serves until ctx ends, then
// drains (see Shutdown) within Config.DrainTimeout and closes the Server.
func (s *Server) ListenAndServe(ctx context.Context) error {
	ln, err := net.Listen("tcp", s.cfg.Listen)
	if err != nil {
		s.Close()
		return fmt.Errorf("failed to listen: %w", err)
	}
	return s.Serve(ctx, ln)
}

// Serve serves on ln until ctx ends, then drains within
// Config.DrainTimeout and closes the Server. It returns nil after a clean
// drain.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	addr := ln.Addr().String()
	s.addr.Store(&addr)
	s.log.Info("serving", zap.String("addr", addr), zap.String("upstream", redact.URL(s.cfg.Upstream)))
	// Connections beyond the clients' limit and a margin for requests
	// (status, probes, a refusal being written) wait in the kernel's
	// accept queue instead of holding descriptors. Connections that are
	// not clients cannot keep them there: one idle between keep-alive
	// requests is closed after Config.IdleConnTimeout, one that sends no
	// request after headerTimeout, and either at once (after reapMinIdle)
	// while the listener is full (idleconns.go).
	ln = s.conns.listener(netutil.LimitListener(ln, s.cfg.MaxClients+connectionMargin))
	hs := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: headerTimeout,
		IdleTimeout:       s.cfg.IdleConnTimeout,
		ConnState:         s.conns.connState,
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
	sessions := s.clients.drain()
	s.log.Info("draining", zap.Int("clients", len(sessions)))
	// Calls in flight get most of the drain to be answered (new ones are
	// refused at once); then the rest are answered with an error, and
	// every client gets its close frame after its answers.
	callsCtx, cancel := context.WithDeadline(ctx, callsDeadline(ctx))
	var wg sync.WaitGroup
	for _, ss := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ss.tr.waitCalls(callsCtx)
		}()
	}
	wg.Wait()
	cancel()
	s.cutCalls(errShuttingDown)
	for _, ss := range sessions {
		ss.tr.waitCalls(ctx) // the cut calls' error answers are queued
		ss.close(reasonShutdown, false)
	}
	var err error
	for s.clients.len() > 0 {
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

// callsDeadline is when a drain stops waiting for forwarded calls: three
// quarters of the way to ctx's deadline, leaving the rest for the
// answers and close frames to be written.
func callsDeadline(ctx context.Context) time.Time {
	deadline, ok := ctx.Deadline()
	if !ok {
		return time.Now().Add(time.Minute)
	}
	return time.Now().Add(time.Until(deadline) * 3 / 4)
}

// Close cuts every local client off, closes the upstream client and waits
// for every goroutine the Server started. It is idempotent.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		for _, ss := range s.clients.drain() {
			ss.close(reasonShutdown, true)
			ss.tr.cut()
		}
		s.cancel()
		s.src.close()
		s.hub.close()
		s.clients.wait()
		s.wg.Wait()
		if s.rec != nil {
			if err := s.rec.Close(); err != nil {
				s.log.Warn("closing the recording failed", zap.Error(err))
			}
		}
		s.reg.Unregister(s.coll)
		s.reg.Unregister(s.delays)
		s.log.Info("closed")
	})
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
			s.hub.sample(now.Sub(last))
			last = now
		}
	}
}
