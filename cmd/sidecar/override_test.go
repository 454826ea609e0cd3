package main

import (
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

// Nothing is overridden in silence: -demo with -upstream is an error
// naming both; a config key or a WSFAN_* variable that is not a setting
// names the nearest one; YAML's yes and no work for switches.
func TestNoSilentOverride(t *testing.T) {
	err := run(t.Context(), []string{"-demo", "-upstream", "ws://127.0.0.1:1/ws", "-listen", freeAddr(t)}, noEnv, io.Discard, io.Discard)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "-demo and -upstream conflict")

	path := writeFile(t, "queue-bytes: 1MiB\n")
	_, err = parseOptions([]string{"-config", path}, noEnv, io.Discard)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "did you mean queue_bytes?")

	for text, want := range map[string]bool{"demo: yes\n": true, "demo: on\n": true, "demo: no\n": false} {
		o, err := parseOptions([]string{"-config", writeFile(t, text)}, noEnv, io.Discard)
		require.NoError(t, err, text)
		assert.Equal(t, want, o.demo, text)
	}

	core, logs := observer.New(zap.WarnLevel)
	warnUnknownVariables(zap.New(core), []string{"WSFAN_UPSTREM=ws://x", "WSFAN_LISTEN=127.0.0.1:1", "WSFAN_WHATEVER_ELSE=1", "HOME=/root"})
	require.Equal(t, 2, logs.Len())
	assert.True(t, strings.Contains(logs.All()[0].Message, "did you mean WSFAN_UPSTREAM?"), logs.All()[0].Message)
	assert.Contains(t, logs.All()[1].Message, "WSFAN_WHATEVER_ELSE is ignored")
}
