package main

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/wsfan/wsfan/pkg/sidecar"
)

// watchInterval is how often -config-watch reads the config file.
const watchInterval = time.Second

// reloader applies the settings again, read as at start (the -config
// file, then the WSFAN_* variables, then the flags), to a running
// sidecar (sidecar.Server.Reload): on SIGHUP, and with -config-watch when
// the file's content changes. It runs on one goroutine (run), so
// reloads never overlap.
type reloader struct {
	args   []string
	getenv func(string) string
	srv    *sidecar.Server
	level  zap.AtomicLevel // the logger's, set by a reload
	format logFormat       // the logs' format, which a reload cannot change
	trace  tracing         // -otlp-endpoint and -trace-sample, which a reload cannot change
	demo   *demoUpstream   // the demo's exchange, nil without -demo
	log    *zap.Logger
}

// run reloads on each SIGHUP and, when watch names the config file, on
// each change of its content, until ctx ends.
func (rl *reloader) run(ctx context.Context, hup <-chan os.Signal, watch string) {
	var tick <-chan time.Time
	var last [sha256.Size]byte
	if watch != "" {
		t := time.NewTicker(watchInterval)
		defer t.Stop()
		tick = t.C
		last, _ = fileHash(watch)
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
			rl.reload("SIGHUP")
		case <-tick:
			// A Kubernetes ConfigMap volume swaps a symlink (..data) to a
			// new directory: reading through the path follows it, and
			// the content's hash tells a real change from a touch.
			sum, err := fileHash(watch)
			if err != nil || sum == last {
				continue // a file being replaced is read again next tick
			}
			last = sum
			rl.reload("config file changed")
		}
	}
}

// fileHash returns the SHA-256 of the file at path.
func fileHash(path string) ([sha256.Size]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return [sha256.Size]byte{}, err
	}
	return sha256.Sum256(b), nil
}

// reload reads the settings again and applies them, logging one line:
// what changed and the new version, or why nothing was applied.
func (rl *reloader) reload(trigger string) {
	var next *options
	res, err := rl.srv.Reload(func() (sidecar.Config, error) {
		o, err := parseOptions(rl.args, rl.getenv, io.Discard)
		if err != nil {
			return sidecar.Config{}, err
		}
		if err := o.checkNATS(); err != nil {
			return sidecar.Config{}, err
		}
		if o.logFormat != rl.format {
			return sidecar.Config{}, fmt.Errorf("%s changed: %w, and nothing of the new configuration was applied", o.named("log-format"), sidecar.ErrNeedsRestart)
		}
		if o.tracing != rl.trace {
			changed := "otlp-endpoint"
			if o.tracing.endpoint == rl.trace.endpoint {
				changed = "trace-sample"
			}
			return sidecar.Config{}, fmt.Errorf("%s changed: %w, and nothing of the new configuration was applied", o.named(changed), sidecar.ErrNeedsRestart)
		}
		if rl.demo != nil {
			rl.demo.configure(&o.cfg)
		}
		next = o
		return o.cfg, nil
	})
	if err != nil {
		rl.log.Error("config reload refused: the running configuration is unchanged", zap.String("trigger", trigger), zap.Error(err))
		return
	}
	if res.EndpointsKept != nil {
		rl.log.Warn("config reload kept the upstream endpoints; the rest is applied", zap.String("trigger", trigger), zap.Error(res.EndpointsKept))
	}
	changed := res.Changed
	if next.logLevel != rl.level.Level() {
		rl.level.SetLevel(next.logLevel)
		changed = append(changed, "log_level")
	}
	rl.log.Info("config reloaded", zap.String("trigger", trigger), zap.Strings("changed", changed),
		zap.String("version", res.Version))
}

// notifyHUP returns a channel of SIGHUPs, which no longer end the
// process, and a function that stops them.
func notifyHUP() (<-chan os.Signal, func()) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	return hup, func() { signal.Stop(hup) }
}
