package main

import (
	"context"
	"flag"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zapcore"

	"github.com/wsfan/wsfan/internal/format"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/protocol"
	"github.com/wsfan/wsfan/pkg/sidecar"
)

func writeFile(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "sidecar.yaml")
	require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
	return path
}

func parse(args []string, env map[string]string) (*options, error) {
	return parseOptions(args, func(k string) string { return env[k] }, io.Discard)
}

// Flags override WSFAN_* variables, which override the config file.
func TestOptionsPrecedence(t *testing.T) {
	path := writeFile(t, "upstream: ws://file\nprotocol: deribit\ngrace: 2s\noverflow: drop-newest\nlisten: 127.0.0.1:9000\n"+
		"last_message_cache: true\nallowed_origins: [http://a, http://b]\nqueue_bytes: 4MiB\n")
	env := map[string]string{"WSFAN_CONFIG": path, "WSFAN_LISTEN": "127.0.0.1:9001", "WSFAN_QUEUE_BYTES": "1024",
		"WSFAN_ALLOWED_ORIGINS": "http://c"}
	o, err := parse([]string{"-listen", "127.0.0.1:9002", "-allowed-origins", "http://d,http://e"}, env)
	require.NoError(t, err)
	c := o.cfg
	assert.Equal(t, "ws://file", c.Upstream)
	assert.Equal(t, "deribit", c.Protocol)
	assert.Equal(t, 2*time.Second, c.Grace)
	assert.Equal(t, client.DropNewest, c.Overflow)
	assert.Equal(t, "127.0.0.1:9002", c.Listen)
	assert.Equal(t, 1024, c.QueueBytes)
	assert.True(t, c.LastMessageCache)
	assert.Equal(t, []string{"http://d", "http://e"}, c.AllowedOrigins, "a list flag replaces, not appends")
	assert.Equal(t, "-listen", o.named("listen"))
	assert.Equal(t, "WSFAN_QUEUE_BYTES", o.named("queue-bytes"))
	assert.Equal(t, "grace ("+path+" line 3)", o.named("grace"))
}

// With nothing set, the options are the documented defaults (zero fields
// are the library's defaults).
func TestOptionsDefaults(t *testing.T) {
	o, err := parse(nil, nil)
	require.NoError(t, err)
	assert.Equal(t, sidecar.Config{Protocol: defaultProtocol, Listen: sidecar.DefaultListen}, o.cfg)
	assert.Equal(t, logConsole, o.logFormat)
	assert.Equal(t, zapcore.InfoLevel, o.logLevel)
	assert.False(t, o.demo)
}

// Every setting has a WSFAN_ variable.
func TestOptionsFromEnvironment(t *testing.T) {
	env := map[string]string{
		"WSFAN_UPSTREAM": "wss://example.com/ws", "WSFAN_PROTOCOL": "ethereum", "WSFAN_LISTEN": "127.0.0.1:0",
		"WSFAN_TOKEN": "s3cret", "WSFAN_ALLOWED_ORIGINS": "http://localhost:3000, https://app.example",
		"WSFAN_DEMO": "true", "WSFAN_GRACE": "1m30s", "WSFAN_QUEUE_BYTES": "512KiB", "WSFAN_OVERFLOW": "drop-newest",
		"WSFAN_LAST_MESSAGE_CACHE": "1", "WSFAN_MAX_CLIENTS": "7", "WSFAN_MAX_TOPICS_PER_CLIENT": "8",
		"WSFAN_MAX_TOPICS": "9", "WSFAN_MAX_FRAME_BYTES": "2 MiB", "WSFAN_MAX_CALLS_PER_CLIENT": "10",
		"WSFAN_BLOCKED_METHODS": "public/login,private/buy", "WSFAN_WRITE_TIMEOUT": "1s",
		"WSFAN_REQUEST_TIMEOUT": "2s", "WSFAN_DRAIN_TIMEOUT": "3s", "WSFAN_LOG_FORMAT": "json",
		"WSFAN_LOG_LEVEL": "debug",
	}
	o, err := parse(nil, env)
	require.NoError(t, err)
	assert.Equal(t, sidecar.Config{
		Upstream: "wss://example.com/ws", Protocol: "ethereum", Listen: "127.0.0.1:0", Token: "s3cret",
		AllowedOrigins: []string{"http://localhost:3000", "https://app.example"},
		Grace:          90 * time.Second, QueueBytes: 512 << 10, Overflow: client.DropNewest, LastMessageCache: true,
		MaxClients: 7, MaxTopicsPerClient: 8, MaxTopics: 9, MaxFrameBytes: 2 << 20, MaxCallsPerClient: 10,
		BlockedMethods: []string{"public/login", "private/buy"},
		WriteTimeout:   time.Second, RequestTimeout: 2 * time.Second, DrainTimeout: 3 * time.Second,
	}, o.cfg)
	assert.True(t, o.demo)
	assert.Equal(t, logJSON, o.logFormat)
	assert.Equal(t, zapcore.DebugLevel, o.logLevel)
	for name := range env {
		flagName := strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(name, "WSFAN_")), "_", "-")
		assert.Equal(t, name, o.named(flagName))
	}
}

// Every key of sidecar.Config's YAML form is a flag (so also a variable
// and a key of the file), with the same name.
func TestEveryConfigKeyIsAFlag(t *testing.T) {
	fs := (&options{}).flagSet()
	typ := reflect.TypeOf(sidecar.Config{})
	for i := range typ.NumField() {
		key := typ.Field(i).Tag.Get("yaml")
		if key == "-" {
			continue
		}
		assert.NotNil(t, fs.Lookup(strings.ReplaceAll(key, "_", "-")), "Config.%s (%s) has no flag", typ.Field(i).Name, key)
	}
}

// Every refused setting is named as the user wrote it (flag, variable or
// file key with its line), with the bad value, and "sidecar:" is said at
// most once.
func TestOptionErrorsNameSettingAndValue(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  map[string]string
		file string
		want []string
	}{
		{args: []string{"-queue-bytes", "4MB"}, want: []string{`"4MB"`, "flag -queue-bytes", "512KiB"}},
		{env: map[string]string{"WSFAN_QUEUE_BYTES": "4 MB"}, want: []string{`"4 MB"`, "WSFAN_QUEUE_BYTES", "4MiB"}},
		{file: "queue_bytes: 4MB\n", want: []string{`"4MB"`, "queue_bytes (", "line 1)"}},
		{args: []string{"-max-frame-bytes", "-1"}, want: []string{`"-1"`, "-max-frame-bytes"}},
		{env: map[string]string{"WSFAN_GRACE": "5"}, want: []string{`"5"`, "WSFAN_GRACE", "250ms"}},
		{file: "upstream: ws://x\nwrite_timeout: soon\n", want: []string{`"soon"`, "write_timeout (", "line 2)"}},
		{args: []string{"-max-clients", "many"}, want: []string{`"many"`, "-max-clients", "whole number"}},
		{env: map[string]string{"WSFAN_MAX_TOPICS": "-5"}, want: []string{`"-5"`, "WSFAN_MAX_TOPICS"}},
		{args: []string{"-protocol", "binance"}, want: []string{`"binance"`, "-protocol", format.OneOf(protocol.Names())}},
		{env: map[string]string{"WSFAN_UPSTREAM": "https://thalex.com"}, want: []string{`"https://thalex.com"`, "WSFAN_UPSTREAM", "wss://"}},
		{args: []string{"-overflow", "sometimes"}, want: []string{`"sometimes"`, "-overflow", "close-subscription"}},
		{env: map[string]string{"WSFAN_LOG_FORMAT": "xml"}, want: []string{`"xml"`, "WSFAN_LOG_FORMAT", "console or json"}},
		{args: []string{"-log-level", "loud"}, want: []string{`"loud"`, "-log-level", "debug, info, warn or error"}},
		{env: map[string]string{"WSFAN_LAST_MESSAGE_CACHE": "yes please"}, want: []string{`"yes please"`, "WSFAN_LAST_MESSAGE_CACHE"}},
		{file: "queue-bytes: 1024\n", want: []string{"unknown setting queue-bytes", "line 1"}},
		{file: "version: true\n", want: []string{"unknown setting version"}},
		{file: "grace: 1s\ngrace: 2s\n", want: []string{"grace (", "line 2)", "twice"}},
		{file: "allowed_origins: {a: b}\n", want: []string{"allowed_origins (", "want a value or a list"}},
		{file: "- a\n- b\n", want: []string{"want a mapping"}},
		{args: []string{"-nope"}, want: []string{"-nope", "see sidecar -h"}},
		{args: []string{"-upstream", "thalex.com/ws/api/v2"}, want: []string{`"thalex.com/ws/api/v2"`, "want a ws:// or wss:// URL"}},
		{args: []string{"extra"}, want: []string{`"extra"`}},
		{args: []string{"-nats", "http://x:4222"}, want: []string{`"http://x:4222"`, "-nats", "nats://host:4222"}},
		{env: map[string]string{"WSFAN_NATS_GROUP": "deribit main"}, want: []string{`"deribit main"`, "WSFAN_NATS_GROUP", "A-Z a-z 0-9 _ -"}},
		{args: []string{"-nats-creds", "/no/such.creds"}, want: []string{`"/no/such.creds"`, "-nats-creds", "existing file"}},
	} {
		env := tc.env
		if tc.file != "" {
			env = map[string]string{"WSFAN_CONFIG": writeFile(t, tc.file)}
		}
		_, err := parse(tc.args, env)
		require.Error(t, err, "%v %v %q", tc.args, tc.env, tc.file)
		for _, w := range tc.want {
			assert.Contains(t, err.Error(), w)
		}
		assert.NotContains(t, err.Error(), "sidecar:")
	}
}

// A listener that is not loopback needs a token; the error names the
// setting that chose the address.
func TestPublicListenNeedsToken(t *testing.T) {
	env := map[string]string{"WSFAN_UPSTREAM": "ws://127.0.0.1:1", "WSFAN_LISTEN": "0.0.0.0:0"}
	err := run(context.Background(), nil, func(k string) string { return env[k] }, io.Discard, io.Discard)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "WSFAN_LISTEN 0.0.0.0:0 is not a loopback address")
	assert.Contains(t, err.Error(), "-token")

	err = run(context.Background(), []string{"-protocol", "deribit"}, noEnv, io.Discard, io.Discard)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no upstream: set -upstream")
}

// NATS settings that do not go together are refused before anything
// starts, naming what the user set.
func TestNATSSettingsGoTogether(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"WSFAN_NATS_GROUP": "g"}, "WSFAN_NATS_GROUP is set without -nats"},
		{map[string]string{"WSFAN_NATS": "nats://127.0.0.1:1"}, "WSFAN_NATS needs a group: set -nats-group"},
		{map[string]string{"WSFAN_NATS": "nats://127.0.0.1:1", "WSFAN_NATS_GROUP": "g", "WSFAN_NATS_LEASE_TTL": "100ms"},
			"WSFAN_NATS_LEASE_TTL 100ms is below 200ms"},
	} {
		tc.env["WSFAN_UPSTREAM"] = "ws://127.0.0.1:1"
		tc.env["WSFAN_LISTEN"] = "127.0.0.1:0"
		err := run(context.Background(), nil, func(k string) string { return tc.env[k] }, io.Discard, io.Discard)
		require.Error(t, err)
		assert.Contains(t, err.Error(), tc.want)
	}
}

// -h and -version work whatever else is wrong; an empty or comment-only
// file sets nothing.
func TestHelpAndVersionDespiteBadSettings(t *testing.T) {
	env := map[string]string{"WSFAN_QUEUE_BYTES": "lots", "WSFAN_CONFIG": writeFile(t, "nonsense: 1\n")}
	var usage strings.Builder
	_, err := parseOptions([]string{"-h"}, func(k string) string { return env[k] }, &usage)
	require.ErrorIs(t, err, flag.ErrHelp)
	assert.Contains(t, usage.String(), "usage: sidecar")
	o, err := parse([]string{"-version"}, env)
	require.NoError(t, err)
	assert.True(t, o.version)

	for _, content := range []string{"", "# nothing yet\n"} {
		o, err := parse(nil, map[string]string{"WSFAN_CONFIG": writeFile(t, content)})
		require.NoError(t, err, "%q", content)
		assert.Equal(t, sidecar.DefaultListen, o.cfg.Listen)
	}
}

// Several upstream endpoints: comma-separated anywhere, or -upstream
// again on the command line, which adds; a variable or the file's list
// is replaced by the command line, as every setting is.
func TestSeveralUpstreams(t *testing.T) {
	o, err := parse([]string{"-upstream", "ws://a,ws://b", "-upstream", "ws://c"}, nil)
	require.NoError(t, err)
	assert.Equal(t, "ws://a", o.cfg.Upstream)
	assert.Equal(t, []string{"ws://b", "ws://c"}, o.cfg.Fallbacks)

	o, err = parse([]string{"-upstream", "ws://d"}, map[string]string{"WSFAN_UPSTREAM": "ws://e, ws://f"})
	require.NoError(t, err)
	assert.Equal(t, "ws://d", o.cfg.Upstream)
	assert.Empty(t, o.cfg.Fallbacks, "the command line replaces the variable")

	o, err = parse(nil, map[string]string{"WSFAN_UPSTREAM": "ws://e, ws://f"})
	require.NoError(t, err)
	assert.Equal(t, "ws://e", o.cfg.Upstream)
	assert.Equal(t, []string{"ws://f"}, o.cfg.Fallbacks)

	path := writeFile(t, "upstream: [ws://g, ws://h]\nprotocol: deribit\n")
	o, err = parse([]string{"-config", path}, nil)
	require.NoError(t, err)
	assert.Equal(t, "ws://g", o.cfg.Upstream)
	assert.Equal(t, []string{"ws://h"}, o.cfg.Fallbacks)

	_, err = parse([]string{"-upstream", "ws://a,http://b"}, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "want a ws:// or wss:// URL, or several")
}

// -hot-standby is a flag, a variable and a key of the file like any
// setting; the sidecar refuses more standby connections than the SDK
// keeps.
func TestHotStandbyOption(t *testing.T) {
	o, err := parse([]string{"-upstream", "ws://a", "-hot-standby", "1"}, nil)
	require.NoError(t, err)
	assert.Equal(t, 1, o.cfg.HotStandby)
	o, err = parse([]string{"-upstream", "ws://a"}, map[string]string{"WSFAN_HOT_STANDBY": "2"})
	require.NoError(t, err)
	assert.Equal(t, 2, o.cfg.HotStandby)
	o, err = parse([]string{"-config", writeFile(t, "upstream: ws://a\nhot_standby: 3\n")}, nil)
	require.NoError(t, err)
	assert.Equal(t, 3, o.cfg.HotStandby)

	_, err = sidecar.New(sidecar.Config{Upstream: "ws://127.0.0.1:1/ws", Protocol: "thalex", HotStandby: 4})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "hot standby 4: want 0 to 3")
}
