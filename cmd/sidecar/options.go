package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/wsfan/wsfan/internal/format"
	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/sidecar"
)

// options are the parsed config file, environment and command line.
type options struct {
	cfg       sidecar.Config
	demo      bool
	version   bool
	logFormat logFormat
	logLevel  zapcore.Level
	// configWatch reloads when the -config file's content changes.
	configWatch bool
	tracing     tracing // -otlp-endpoint, -trace-sample

	// source says where each setting was last set, by flag name, so an
	// error about it names what the user wrote: "-listen",
	// "WSFAN_LISTEN" or "listen (sidecar.yaml line 3)".
	source map[string]string
	// upstreams is -upstream's value.
	upstreams *upstreamsValue
}

// notFromEnvOrFile are the flags that only the command line sets
// (-config has WSFAN_CONFIG, read before the file).
var notFromEnvOrFile = map[string]bool{"config": true, "version": true}

// parseOptions applies the config file (-config or WSFAN_CONFIG), then the
// WSFAN_* variables, then the flags: the last one set wins. Every setting
// is a flag, and all three sources go through the flag's own parser, so a
// bad value is refused the same way wherever it was written, with its
// name and the value in the error. -h writes the usage to usage and
// returns flag.ErrHelp, and -version is honoured, even when a variable or
// the file is wrong.
func parseOptions(args []string, getenv func(string) string, usage io.Writer) (*options, error) {
	o := &options{source: make(map[string]string)}
	fs := o.flagSet()
	srcErr := o.applyFileAndEnv(fs, args, getenv)
	o.upstreams.args = true // a repeated -upstream adds endpoints
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(usage)
			fs.Usage()
		}
		if strings.HasPrefix(err.Error(), "flag provided but not defined") {
			err = fmt.Errorf("%w (see sidecar -h)", err)
		}
		return nil, hideSecretArgs(err, args) // the flag package names the flag and the value
	}
	if o.version { // whatever else is wrong
		return o, nil
	}
	if srcErr != nil {
		return nil, srcErr
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q (flags only; see -h)", fs.Args())
	}
	fs.Visit(func(f *flag.Flag) { o.source[f.Name] = "-" + f.Name })
	return o, nil
}

// applyFileAndEnv applies the config file, then the WSFAN_* variables.
func (o *options) applyFileAndEnv(fs *flag.FlagSet, args []string, getenv func(string) string) error {
	if path := configPath(args, getenv); path != "" {
		if err := o.loadFile(fs, path); err != nil {
			return err
		}
	}
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		name := envName(f.Name)
		v := getenv(name)
		if v == "" || notFromEnvOrFile[f.Name] || err != nil {
			return
		}
		if serr := f.Value.Set(v); serr != nil {
			err = fmt.Errorf("invalid value %q for %s: %w", shownValue(f.Name, v), name, serr)
		}
		o.source[f.Name] = name
	})
	return err
}

// flagSet defines every setting as a flag over o. Errors are returned, not
// printed: main prints them once.
func (o *options) flagSet() *flag.FlagSet {
	c := &o.cfg
	c.Protocol, c.Listen = defaultProtocol, sidecar.DefaultListen
	o.logFormat, o.logLevel = logConsole, zapcore.InfoLevel
	o.tracing.sample = 1

	fs := flag.NewFlagSet("sidecar", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.String("config", "", "YAML `file` of settings: each key is a flag's name with _ for - (queue_bytes: 4MiB);\nSIGHUP reads it again and applies what can change while running (docs/reload.md)")
	fs.BoolVar(&o.configWatch, "config-watch", false, "reload whenever the -config file's content changes (read every second; follows a\nKubernetes ConfigMap's symlink swap)")
	o.upstreams = &upstreamsValue{first: &c.Upstream, more: &c.Fallbacks}
	fs.Var(o.upstreams, "upstream", "upstream WebSocket `URL`, e.g. wss://thalex.com/ws/api/v2; several, comma-separated or the flag again,\nare endpoints of one service in order of preference: when one fails the next is dialled at once")
	fs.Var(protocolValue(&c.Protocol), "protocol", "`dialect`: "+format.OneOf(protocol.Names()))
	fs.StringVar(&c.Listen, "listen", c.Listen, "local `address`; a non-loopback one requires -token")
	fs.StringVar(&c.Token, "token", "", "bearer `tokens` local clients must send one of (Authorization: Bearer or ?token=), comma-separated;\na reload that removes one closes the clients that used it")
	fs.Var(listValue(&c.AllowedOrigins), "allowed-origins", "comma-separated browser `origins` allowed to open streams, e.g. http://localhost:3000, or * for any\n(default: none but the sidecar's own)")
	fs.Var(listValue(&c.AllowedHosts), "allowed-hosts", "comma-separated host `names` the sidecar answers to beyond localhost, loopback addresses and -listen's host:\n"+
		"sidecar.example, *.example.com, 10.0.0.0/8, or * for any; every other Host is refused (DNS rebinding)")
	fs.Var(headerValue(&c.UpstreamHeader), "upstream-header", "comma-separated `headers` sent to the upstream, e.g. 'X-Api-Key: KEY': a provider key kept out of the URL\n(never logged)")
	fs.BoolVar(&o.demo, "demo", false, "run against an embedded simulated exchange (no network needed)")

	fs.Var(durationValue(&c.Grace), "grace", "the `duration` an upstream subscription outlives its last local subscriber (default 5s)")
	fs.Var(sizeValue(&c.QueueBytes), "queue-bytes", "`size` of each local client's queue: 1048576, 512KiB, 4MiB... (default 4MiB)")
	fs.Var(overflowValue(&c.Overflow), "overflow", "`policy` for a full local queue: close-subscription closes the client (it reconnects and\nresynchronises), drop-newest drops the frame for that client and counts it")
	fs.BoolVar(&c.LastMessageCache, "last-message-cache", false, "send new subscribers the topic's last message first")
	fs.Var(listValue(&c.Topics), "topics", "comma-separated `topics` the upstream offers; any other is refused at once, naming them\n(default: none, every topic is asked upstream)")
	fs.Var(countValue(&c.HotStandby), "hot-standby", "`number` of more upstream connections kept live, each carrying every topic, merged so each message\n"+
		"reaches local clients once: a connection that dies costs nothing (0 to 3; each counts against the venue's limits; default 0)")
	fs.Var(countValue(&c.MaxClients), "max-clients", "`number` of local clients allowed (default 10000)")
	fs.Var(durationValue(&c.IdleConnTimeout), "idle-conn-timeout", "the longest `duration` a keep-alive connection may sit without a request after its last; while\n"+
		"-max-clients plus 128 connections are open, one that is not a client and has been idle (or silent) for 1s\n"+
		"is closed at once; WebSocket clients and streams are never cut (default 5s)")
	fs.Var(countValue(&c.MaxTopicsPerClient), "max-topics-per-client", "`number` of topics one local client may hold (default 1000)")
	fs.Var(countValue(&c.MaxTopics), "max-topics", "`number` of distinct upstream topics (default 10000)")
	fs.Var(sizeValue(&c.MaxFrameBytes), "max-frame-bytes", "`size` of the largest frame accepted from a local client (default 1MiB)")
	fs.Var(countValue(&c.MaxCallsPerClient), "max-calls-per-client", "`number` of calls one local client may have in flight upstream (default 64)")
	fs.Var(countValue(&c.MaxBatch), "max-batch", "`number` of requests one JSON-RPC batch array may hold; a longer batch is answered with one\nerror naming the limit, before any of it is parsed (default 1000)")
	fs.StringVar(&c.Record, "record", "", "`directory` to record every upstream frame into, with its receive time, for cmd/replay\n(docs/record-replay.md); made 0700 (default: no recording)")
	fs.BoolVar(&c.RecordPrivate, "record-private", false, "record private topics and the answers to calls that are not read-only (account data) too")
	fs.Var(rateValue(&c.RateLimit), "rate-limit", "`requests` a second sent upstream at most, shared by every local client: calls over it wait\ninstead of being refused by the exchange (default 0: no limit)")
	fs.Var(countValue(&c.RateBurst), "rate-burst", "`number` of requests sent upstream at once under -rate-limit (default: one second's worth)")
	fs.Var(countValue(&c.SSEHistory), "sse-history", "`number` of each topic's last messages kept for SSE streams resuming with Last-Event-ID (default 1000)")
	fs.Var(sizeValue(&c.SSEHistoryBytes), "sse-history-bytes", "`size` of the payloads each topic keeps for resuming SSE streams (default 1MiB)")
	fs.Var(listValue(&c.BlockedMethods), "blocked-methods", "comma-separated `methods` never forwarded upstream\n(default: the exchange's session methods: logins, logout, cancel-on-disconnect, private/subscribe)")
	fs.Var(durationValue(&c.WriteTimeout), "write-timeout", "the longest `duration` of each write to a local client (default 10s)")
	fs.Var(durationValue(&c.RequestTimeout), "request-timeout", "the longest `duration` of an upstream subscribe or forwarded call (default 30s)")
	fs.Var(durationValue(&c.UpstreamPing), "upstream-ping", "how often the upstream is pinged: the `duration` between pings (default 1s)")
	fs.Var(durationValue(&c.UpstreamPingTimeout), "upstream-ping-timeout", "the longest `duration` a pong may take, also the lag threshold: a dead upstream is noticed\nwithin -upstream-ping plus this, and one lagging more behind its data is replaced (default 3s)")
	fs.Var(durationValue(&c.UpstreamDialTimeout), "upstream-dial-timeout", "the longest `duration` of each upstream dial, handshake included (default 5s)")
	fs.Var(durationValue(&c.UpstreamReconnectMax), "upstream-reconnect-max", "the longest `duration` between upstream reconnect attempts, jitter included;\nthe first waits about 100ms, doubling (default 2s)")
	fs.Var(durationValue(&c.DrainTimeout), "drain-timeout", "the longest `duration` SIGINT/SIGTERM waits for local clients to drain (default 10s)")

	fs.Var(natsURLsValue(&c.NATS), "nats", "NATS server `URLs` (nats://host:4222, comma-separated): join a group of sidecars sharing one\nupstream connection, held by one of them at a time (default: none, hold it here)")
	fs.Var(groupValue(&c.NATSGroup), "nats-group", "the NATS group's `name`, one per exchange account, e.g. deribit-main (required with -nats)")
	fs.Var(fileValue(&c.NATSCreds), "nats-creds", "NATS credentials `file` (JWT and NKey)")
	fs.Var(fileValue(&c.NATSTLSCA), "nats-tls-ca", "PEM `file` of the CA signing the NATS servers' certificates")
	fs.Var(fileValue(&c.NATSTLSCert), "nats-tls-cert", "PEM `file` of this sidecar's NATS client certificate (with -nats-tls-key)")
	fs.Var(fileValue(&c.NATSTLSKey), "nats-tls-key", "PEM `file` of the key of -nats-tls-cert")
	fs.Var(durationValue(&c.NATSLeaseTTL), "nats-lease-ttl", "the group leader's lease `duration`: after a leader dies a member takes over\nwithin 1.25 times it plus a dial; at least 200ms (default 2s)")
	fs.Var(durationValue(&c.NATSPing), "nats-ping", "how often to ping the NATS server (`duration`, default 1s)")
	fs.Var(countValue(&c.NATSMaxPingsOut), "nats-max-pings-out", "unanswered NATS pings (a `number`) before the link is taken for dead and dialled again:\na dead or stalled link is noticed within this many pings plus one (default 3)")

	fs.Var(otlpValue(&o.tracing.endpoint), "otlp-endpoint", "OTLP/HTTP collector `URL` to send traces to, e.g. http://localhost:4318: each forwarded call and round\n"+
		"of upstream subscribes is a span, under a local client's traceparent (docs/tracing.md; default: no tracing)")
	fs.Var(sampleValue(&o.tracing.sample), "trace-sample", "`share` of the traces starting here that are kept, 0 to 1; a client's sampled traceparent is\nalways followed")
	fs.TextVar(&o.logFormat, "log-format", o.logFormat, "`format` of the logs: console or json")
	fs.Var(levelValue(&o.logLevel), "log-level", "`level` of the logs: debug, info, warn or error")
	fs.BoolVar(&o.version, "version", false, "print the version and exit")
	fs.Usage = func() {
		w := fs.Output()
		_, _ = fmt.Fprintf(w, "usage: sidecar -upstream URL [-protocol thalex] [-listen %s] [flags]\n       sidecar -demo\n\n", sidecar.DefaultListen)
		_, _ = fmt.Fprintf(w, "Every flag but -version can also be set as WSFAN_<NAME> (WSFAN_UPSTREAM,\n"+
			"WSFAN_QUEUE_BYTES) or as <name> in the -config file (queue_bytes);\n"+
			"a flag wins over its variable, a variable over the file.\n\n")
		fs.PrintDefaults()
	}
	return fs
}

// hideSecretArgs rewrites an error of the flag package, which quotes the
// value it refused, so that the values of secretSettings in args are
// shown as shownValue shows them.
func hideSecretArgs(err error, args []string) error {
	msg := err.Error()
	for i, a := range args {
		if a == "--" {
			break
		}
		name, v, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if len(name) == len(a) || secretSettings[name] == nil {
			continue
		}
		if !hasValue && i+1 < len(args) {
			v = args[i+1]
		}
		msg = strings.ReplaceAll(msg, strconv.Quote(v), strconv.Quote(shownValue(name, v)))
	}
	if msg == err.Error() {
		return err
	}
	return errors.New(msg)
}

// envName is the environment variable of a flag: WSFAN_QUEUE_BYTES.
func envName(flagName string) string {
	return "WSFAN_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// fileKey is the config file key of a flag: queue_bytes, as in
// sidecar.Config's yaml tags.
func fileKey(flagName string) string { return strings.ReplaceAll(flagName, "-", "_") }

// configPath finds -config in args before the flags are parsed (the file
// comes first), or falls back to WSFAN_CONFIG.
func configPath(args []string, getenv func(string) string) string {
	for i, a := range args {
		if a == "--" {
			break
		}
		name := strings.TrimLeft(a, "-")
		if len(name) == len(a) {
			continue
		}
		if name == "config" && i+1 < len(args) {
			return args[i+1]
		}
		if v, ok := strings.CutPrefix(name, "config="); ok {
			return v
		}
	}
	return getenv("WSFAN_CONFIG")
}

// named is how an error names a setting: where its value came from, or
// the flag when it has its default.
func (o *options) named(flagName string) string {
	if s := o.source[flagName]; s != "" {
		return s
	}
	return "-" + flagName
}

// checkNATS refuses NATS settings that do not go together, naming them
// as the user wrote them.
func (o *options) checkNATS() error {
	c := &o.cfg
	if c.NATS == "" {
		for _, f := range []string{"nats-group", "nats-creds", "nats-tls-ca", "nats-tls-cert", "nats-tls-key", "nats-lease-ttl", "nats-ping", "nats-max-pings-out"} {
			if o.source[f] != "" {
				return fmt.Errorf("%s is set without -nats (or WSFAN_NATS): give the NATS server URLs too", o.named(f))
			}
		}
		return nil
	}
	switch {
	case c.NATSGroup == "":
		return fmt.Errorf("%s needs a group: set -nats-group (or WSFAN_NATS_GROUP), e.g. deribit-main", o.named("nats"))
	case (c.NATSTLSCert == "") != (c.NATSTLSKey == ""):
		return fmt.Errorf("%s and %s go together", o.named("nats-tls-cert"), o.named("nats-tls-key"))
	case c.NATSLeaseTTL != 0 && c.NATSLeaseTTL < 200*time.Millisecond:
		return fmt.Errorf("%s %v is below 200ms", o.named("nats-lease-ttl"), c.NATSLeaseTTL)
	}
	return nil
}

// environ lists the process's environment, for warnUnknownVariables.
var environ = os.Environ

// warnUnknownVariables warns about each WSFAN_* variable that is not a
// setting (a misspelling is otherwise silently ignored), naming the
// nearest one.
func warnUnknownVariables(log *zap.Logger, env []string) {
	known := []string{"WSFAN_CONFIG"}
	(&options{}).flagSet().VisitAll(func(f *flag.Flag) {
		if !notFromEnvOrFile[f.Name] {
			known = append(known, envName(f.Name))
		}
	})
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, "WSFAN_") || slices.Contains(known, name) {
			continue
		}
		if guess, ok := nearest(name, known); ok {
			log.Warn("unknown variable "+name+" is ignored: did you mean "+guess+"?", zap.String("variable", name))
		} else {
			log.Warn("unknown variable "+name+" is ignored (see sidecar -h for the settings)", zap.String("variable", name))
		}
	}
}
