package main

import (
	"bytes"
	"encoding/json"
	"io"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// -h prints the usage on stdout and exits 0.
func TestHelpExitsZero(t *testing.T) {
	for _, arg := range []string{"-h", "-help", "--help"} {
		stdout, stderr, code := runMain(t, arg)
		assert.Zero(t, code, arg)
		assert.Empty(t, stderr, arg)
		assert.Contains(t, stdout, "usage: sidecar -upstream URL", arg)
		assert.Contains(t, stdout, "-queue-bytes size", arg)
	}
}

// A bad flag exits 1 with one line that names it and says "sidecar:" once.
func TestBadFlagExitsOne(t *testing.T) {
	stdout, stderr, code := runMain(t, "-queue-bytes", "4MB")
	assert.Equal(t, 1, code)
	assert.Empty(t, stdout)
	assert.Equal(t, "sidecar: invalid value \"4MB\" for flag -queue-bytes: want a byte count such as 1048576, 512KiB, 4MiB or 1GiB\n", stderr)

	_, stderr, code = runMain(t, "-overflow", "sometimes")
	assert.Equal(t, 1, code)
	assert.Equal(t, 1, strings.Count(stderr, "sidecar:"), stderr)
}

// -overflow and -log-level: the help shows a default that is one of the
// values, and a bad value's error lists exactly the values accepted,
// each of which the flag then takes.
func TestChoicesListedAreAccepted(t *testing.T) {
	stdout, _, _ := runMain(t, "-h")
	assert.NotContains(t, stdout, "(default default)")
	for flagName, tc := range map[string]struct{ def, want string }{
		"overflow":  {"close-subscription", "close-subscription or drop-newest"},
		"log-level": {"info", "debug, info, warn or error"},
	} {
		usage := regexp.MustCompile(`(?s)\n  -` + flagName + ` \w+\n(.*?)\n  -`).FindStringSubmatch(stdout)
		require.NotNil(t, usage, flagName)
		assert.Contains(t, usage[1], "(default "+tc.def+")", flagName)

		_, stderr, code := runMain(t, "-"+flagName, "verbose")
		assert.Equal(t, 1, code)
		assert.Equal(t, "sidecar: invalid value \"verbose\" for flag -"+flagName+": want "+tc.want+"\n", stderr)
		for _, v := range regexp.MustCompile(`, | or `).Split(tc.want, -1) {
			_, err := parseOptions([]string{"-" + flagName, v}, noEnv, io.Discard)
			assert.NoError(t, err, "-%s %s is listed", flagName, v)
		}
	}
	for _, refused := range []string{"drop-oldest", "block", "default"} {
		_, err := parseOptions([]string{"-overflow", refused}, noEnv, io.Discard)
		assert.ErrorContains(t, err, "want close-subscription or drop-newest", refused)
	}
}

// -version prints the module, its version, the commit and the Go version,
// and exits 0. A test binary carries no commit (go test does not stamp
// one), so the commit itself is checked on a build info below.
func TestVersion(t *testing.T) {
	stdout, stderr, code := runMain(t, "-version")
	assert.Zero(t, code)
	assert.Empty(t, stderr)
	assert.Regexp(t, `^sidecar github.com/wsfan/wsfan \S+, commit \S+, `+runtime.Version()+"\n$", stdout)
}

func TestVersionLine(t *testing.T) {
	info := &debug.BuildInfo{
		GoVersion: "go1.26.8",
		Main:      debug.Module{Path: "github.com/wsfan/wsfan", Version: "v0.4.0"},
		Settings: []debug.BuildSetting{
			{Key: "vcs", Value: "git"},
			{Key: "vcs.revision", Value: "85d107b0d1f1c7bbf9b25e4c9bbd8e1e1c2d5e6f"},
			{Key: "vcs.modified", Value: "true"},
		},
	}
	assert.Equal(t, "sidecar github.com/wsfan/wsfan v0.4.0, commit 85d107b0d1f1c7bbf9b25e4c9bbd8e1e1c2d5e6f (modified), go1.26.8",
		versionLine(info, true))
	info.Settings = info.Settings[:2]
	assert.Equal(t, "sidecar github.com/wsfan/wsfan v0.4.0, commit 85d107b0d1f1c7bbf9b25e4c9bbd8e1e1c2d5e6f, go1.26.8",
		versionLine(info, true))
	info.Settings = nil
	assert.Equal(t, "sidecar github.com/wsfan/wsfan v0.4.0, commit unknown, go1.26.8", versionLine(info, true))
}

// -log-format json writes one JSON object per line, with a time, a level
// and a message, at the -log-level and above.
func TestJSONLogs(t *testing.T) {
	up := exchangetest.NewServer(thalex.Name)
	defer up.Close()
	var logs lockedBuffer
	r := startSidecar(t, map[string]string{"WSFAN_UPSTREAM": up.URL()}, &logs, "-log-format", "json", "-log-level", "debug")
	r.stop(t)

	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	require.NotEmpty(t, lines)
	levels := make(map[string]bool)
	for _, line := range lines {
		var entry struct{ TS, Level, Msg string }
		require.NoError(t, json.Unmarshal([]byte(line), &entry), "not a JSON line: %s", line)
		assert.NotEmpty(t, entry.TS, line)
		assert.NotEmpty(t, entry.Msg, line)
		levels[entry.Level] = true
	}
	assert.True(t, levels["info"], "no info line in %s", logs.String())
	assert.Contains(t, logs.String(), `"msg":"serving"`)
}

// -log-level warn keeps out the info lines the default level writes, in
// zap's console format.
func TestLogLevel(t *testing.T) {
	up := exchangetest.NewServer(thalex.Name)
	defer up.Close()
	for _, level := range []string{"", "warn"} {
		var logs lockedBuffer
		r := startSidecar(t, map[string]string{"WSFAN_UPSTREAM": up.URL(), "WSFAN_LOG_LEVEL": level}, &logs)
		r.stop(t)
		if level == "" {
			assert.Regexp(t, `(?m)^\d\d:\d\d:\d\d\.\d{3}\tINFO\t.*serving`, logs.String())
		} else {
			assert.NotContains(t, logs.String(), "INFO")
		}
	}
}

// lockedBuffer is a bytes.Buffer the logger and the test share.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
