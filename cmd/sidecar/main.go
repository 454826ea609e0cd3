// Command sidecar holds one upstream WebSocket connection to an exchange or
// an Ethereum node and serves it to many local programs over the same wire
// protocol, so each program only changes its URL:
//
//	sidecar -upstream wss://thalex.com/ws/api/v2 -protocol thalex
//	sidecar -demo   # a simulated exchange, no network needed
//
// Every setting is a flag, a WSFAN_* environment variable (WSFAN_UPSTREAM,
// WSFAN_QUEUE_BYTES, ... one per flag) and a key of the YAML file named by
// -config (queue_bytes: 4MiB); a flag wins over its variable, a variable
// over the file, the file over the default. Sizes take 1048576, 512KiB or
// 4MiB. -log-format json writes one JSON object per log line. SIGINT or
// SIGTERM drains the local clients (within -drain-timeout) and exits.
// SIGHUP reads the settings again and applies what can change while the
// sidecar runs, dropping no client (docs/reload.md); -config-watch does
// so whenever the -config file's content changes.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"

	"go.uber.org/zap"

	"github.com/wsfan/wsfan/pkg/sidecar"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		// The program and the library share the name: say it once.
		fmt.Fprintln(os.Stderr, "sidecar:", strings.TrimPrefix(err.Error(), "sidecar: "))
		os.Exit(1)
	}
}

// run is the whole program: it serves until ctx ends, then drains. stdout
// gets -h, -version and the demo's instructions, stderr the logs.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	opts, err := parseOptions(args, getenv, stdout)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	if opts.version {
		_, _ = fmt.Fprintln(stdout, versionLine(debug.ReadBuildInfo()))
		return nil
	}
	// A SIGHUP from now on reloads (once the sidecar runs), never ends
	// the process.
	hup, stopHUP := notifyHUP()
	defer stopHUP()
	watch := ""
	if opts.configWatch {
		if watch = configPath(args, getenv); watch == "" {
			return fmt.Errorf("%s needs a config file to watch: set -config (or WSFAN_CONFIG)", opts.named("config-watch"))
		}
	}
	cfg := opts.cfg
	level := zap.NewAtomicLevelAt(opts.logLevel)
	cfg.Logger = newLogger(stderr, opts.logFormat, level)
	defer func() { _ = cfg.Logger.Sync() }()
	warnUnknownVariables(cfg.Logger, environ())

	var demo *demoUpstream
	if opts.demo {
		if opts.source["upstream"] != "" {
			return fmt.Errorf("-demo and %s conflict: the demo runs its own exchange; drop one of them", opts.named("upstream"))
		}
		if demo, err = startDemo(cfg.Protocol); err != nil {
			return err
		}
		defer demo.close()
		if extra := slices.DeleteFunc(slices.Clone(cfg.Topics), func(t string) bool { return slices.Contains(demo.topics(), t) }); len(extra) > 0 {
			cfg.Logger.Warn("the demo publishes none of these topics from "+opts.named("topics")+"; it publishes only its feed's",
				zap.Strings("topics", extra), zap.Strings("feed", demo.topics()))
		}
		demo.configure(&cfg)
	}
	if cfg.Upstream == "" {
		return errors.New("no upstream: set -upstream (or WSFAN_UPSTREAM, or upstream: in -config), or try -demo")
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return fmt.Errorf("%s: %w", opts.named("listen"), err)
	}
	if addr, ok := ln.Addr().(*net.TCPAddr); cfg.Token == "" && (!ok || !addr.IP.IsLoopback()) {
		_ = ln.Close()
		return fmt.Errorf("%s %s is not a loopback address: set a token (-token or WSFAN_TOKEN) for local clients to send",
			opts.named("listen"), cfg.Listen)
	}
	if err := opts.checkNATS(); err != nil {
		_ = ln.Close()
		return err
	}
	tp, err := opts.tracing.tracerProvider(ctx, cfg.Logger)
	if err != nil {
		_ = ln.Close()
		return fmt.Errorf("%s: %w", opts.named("otlp-endpoint"), err)
	}
	if tp != nil {
		cfg.TracerProvider = tp
		defer func() { // the last spans are sent, for at most a few seconds
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), tracesFlushTimeout)
			defer cancel()
			_ = tp.Shutdown(sctx)
		}()
	}
	srv, err := sidecar.New(cfg)
	if err != nil {
		_ = ln.Close()
		return err
	}
	stopNotify := notifyWhenReady(getenv("NOTIFY_SOCKET"), srv.Ready, cfg.Logger)
	defer stopNotify()
	if demo != nil {
		demo.printHelp(stdout, dialAddr(ln.Addr()), cfg.Token)
	}
	rl := &reloader{args: args, getenv: getenv, srv: srv, level: level, format: opts.logFormat, trace: opts.tracing, demo: demo, log: cfg.Logger}
	rctx, stopReloads := context.WithCancel(ctx)
	reloads := make(chan struct{})
	go func() {
		defer close(reloads)
		rl.run(rctx, hup, watch)
	}()
	defer func() {
		stopReloads()
		<-reloads
	}()
	return srv.Serve(ctx, ln)
}
