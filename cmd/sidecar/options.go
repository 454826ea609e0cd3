package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/wsfan/wsfan/pkg/sidecar"
)

// options are the parsed command line, environment and config file.
type options struct {
	cfg     sidecar.Config
	demo    bool
	verbose bool
}

// parseOptions reads the config file (-config or WSFAN_CONFIG), then lets
// WSFAN_* variables override it and flags override those.
func parseOptions(args []string, getenv func(string) string, stderr io.Writer) (options, error) {
	var o options
	if path := configPath(args, getenv); path != "" {
		if err := loadConfig(path, &o.cfg); err != nil {
			return o, err
		}
	}
	c := &o.cfg
	if c.Protocol == "" {
		c.Protocol = sidecar.DefaultProtocol
	}
	if c.Listen == "" {
		c.Listen = sidecar.DefaultListen
	}
	fs := flag.NewFlagSet("sidecar", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var ignored string
	fs.StringVar(&ignored, "config", "", "YAML configuration file (keys as in sidecar.Config's yaml tags)")
	fs.StringVar(&c.Upstream, "upstream", c.Upstream, "upstream WebSocket URL, e.g. wss://thalex.com/ws/api/v2")
	fs.StringVar(&c.Protocol, "protocol", c.Protocol, "dialect: thalex, deribit, ethereum or ethereal")
	fs.StringVar(&c.Listen, "listen", c.Listen, "local address; a non-loopback one requires -token")
	fs.StringVar(&c.Token, "token", c.Token, "bearer token local clients must send (Authorization: Bearer or ?token=)")
	fs.BoolVar(&o.demo, "demo", false, "run against an embedded simulated exchange (no network needed)")
	fs.DurationVar(&c.Grace, "grace", c.Grace, "how long an upstream subscription outlives its last local subscriber (default 5s)")
	fs.TextVar(&c.Overflow, "overflow", c.Overflow, "full local queue: disconnect or drop")
	fs.IntVar(&c.QueueBytes, "queue-bytes", c.QueueBytes, "bound of each local client's queue in bytes (default 4 MiB)")
	fs.BoolVar(&c.LastMessageCache, "last-message-cache", c.LastMessageCache, "send new subscribers the topic's last message first")
	fs.IntVar(&c.MaxClients, "max-clients", c.MaxClients, "local clients allowed (default 10000)")
	fs.IntVar(&c.MaxTopicsPerClient, "max-topics-per-client", c.MaxTopicsPerClient, "topics one local client may hold (default 1000)")
	fs.Int64Var(&c.MaxFrameBytes, "max-frame-bytes", c.MaxFrameBytes, "largest frame accepted from a local client (default 1 MiB)")
	fs.DurationVar(&c.DrainTimeout, "drain-timeout", c.DrainTimeout, "how long SIGINT/SIGTERM waits for local clients to drain (default 10s)")
	fs.BoolVar(&o.verbose, "v", false, "debug logs")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: sidecar -upstream URL [-protocol thalex] [-listen %s] [flags]\n       sidecar -demo\n\n", sidecar.DefaultListen)
		fmt.Fprintf(fs.Output(), "Every flag can also be set as WSFAN_<NAME> (e.g. WSFAN_UPSTREAM, WSFAN_QUEUE_BYTES).\n\n")
		fs.PrintDefaults()
	}
	var envErr error
	fs.VisitAll(func(f *flag.Flag) {
		if v := getenv(envName(f.Name)); v != "" && envErr == nil {
			if err := fs.Set(f.Name, v); err != nil {
				envErr = fmt.Errorf("%s=%q: %w", envName(f.Name), v, err)
			}
		}
	})
	if envErr != nil {
		return o, envErr
	}
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q (flags only; see -h)", fs.Args())
	}
	return o, nil
}

// envName is the environment variable of a flag: WSFAN_QUEUE_BYTES.
func envName(flagName string) string {
	return "WSFAN_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// configPath finds -config in args before the flags are parsed (the file
// provides their defaults), or falls back to WSFAN_CONFIG.
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

// loadConfig reads a YAML file into cfg; unknown keys are an error.
func loadConfig(path string, cfg *sidecar.Config) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	defer f.Close()
	dec := yaml.NewDecoder(f)
	dec.KnownFields(true)
	if err := dec.Decode(cfg); err != nil && err != io.EOF {
		return fmt.Errorf("config %s: %w", path, err)
	}
	return nil
}
