// Command sidecar holds one upstream WebSocket connection to an exchange or
// an Ethereum node and serves it to many local programs over the same wire
// protocol, so each program only changes its URL:
//
//	sidecar -upstream wss://thalex.com/ws/api/v2 -protocol thalex
//	sidecar -demo   # a simulated exchange, no network needed
//
// Settings come from flags, then WSFAN_* environment variables (WSFAN_UPSTREAM,
// WSFAN_PROTOCOL, WSFAN_LISTEN, WSFAN_TOKEN, ... one per flag), then the YAML
// file named by -config, then defaults; the first one set wins. SIGINT or
// SIGTERM drains the local clients (within -drain-timeout) and exits.
package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"syscall"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/wsfan/wsfan/pkg/sidecar"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "sidecar:", err)
		os.Exit(1)
	}
}

// run is the whole program: it serves until ctx ends, then drains. stdout
// gets the demo's instructions, stderr the logs.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	opts, err := parseOptions(args, getenv, stderr)
	if err != nil {
		return err
	}
	cfg := opts.cfg
	cfg.Logger = newLogger(stderr, opts.verbose)
	defer func() { _ = cfg.Logger.Sync() }()

	var demo *demoUpstream
	if opts.demo {
		if demo, err = startDemo(cfg.Protocol); err != nil {
			return err
		}
		defer demo.close()
		cfg.Upstream = demo.url()
	}
	if cfg.Upstream == "" {
		return fmt.Errorf("no upstream: set -upstream (or WSFAN_UPSTREAM, or upstream: in -config), or try -demo")
	}
	srv, err := sidecar.New(cfg)
	if err != nil {
		return err
	}
	listen := cfg.Listen
	if listen == "" {
		listen = sidecar.DefaultListen
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		srv.Close()
		return fmt.Errorf("failed to listen on %s: %w", listen, err)
	}
	if demo != nil {
		demo.printHelp(stdout, ln.Addr().String(), cfg.Token)
	}
	return srv.Serve(ctx, ln)
}

// newLogger logs to w in a console format, Info and up (Debug if verbose).
func newLogger(w io.Writer, verbose bool) *zap.Logger {
	level := zapcore.InfoLevel
	if verbose {
		level = zapcore.DebugLevel
	}
	enc := zap.NewDevelopmentEncoderConfig()
	enc.EncodeTime = zapcore.TimeEncoderOfLayout("15:04:05.000")
	core := zapcore.NewCore(zapcore.NewConsoleEncoder(enc), zapcore.AddSync(w), level)
	return zap.New(core)
}
