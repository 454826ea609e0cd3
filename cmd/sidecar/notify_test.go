package main

import (
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// Under systemd (a fake NOTIFY_SOCKET here), the sidecar sends READY=1
// only once its upstream is connected: not while it serves HTTP with the
// upstream down, and exactly once when the upstream comes up.
func TestReadyNotifiedOnlyOnceUpstreamConnected(t *testing.T) {
	dir, err := os.MkdirTemp("", "notify") // a unix socket path must stay short
	require.NoError(t, err)
	defer func() { _ = os.RemoveAll(dir) }()
	sock := filepath.Join(dir, "s")
	systemd, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sock, Net: "unixgram"})
	require.NoError(t, err)
	defer func() { _ = systemd.Close() }()

	up := exchangetest.NewServer(thalex.Name)
	defer up.Close()
	up.Stop() // the exchange is down when the sidecar starts
	r := startSidecar(t, map[string]string{"WSFAN_UPSTREAM": up.URL(), "NOTIFY_SOCKET": sock}, nil)

	code, _ := getStatus(t, "http://"+r.addr+"/readyz")
	require.Equal(t, http.StatusServiceUnavailable, code, "ready with the upstream down")
	buf := make([]byte, 256)
	require.NoError(t, systemd.SetReadDeadline(time.Now().Add(300*time.Millisecond)))
	n, err := systemd.Read(buf)
	require.True(t, errors.Is(err, os.ErrDeadlineExceeded), "systemd was told %q with the upstream down", buf[:n])

	require.NoError(t, up.Start())
	require.NoError(t, systemd.SetReadDeadline(time.Now().Add(20*time.Second)))
	n, err = systemd.Read(buf)
	require.NoError(t, err, "READY=1 never came")
	assert.Equal(t, "READY=1", string(buf[:n]))
	assert.GreaterOrEqual(t, up.Connections(), 1, "ready before the upstream connected")
	code, _ = getStatus(t, "http://"+r.addr+"/readyz")
	assert.Equal(t, http.StatusOK, code)

	up.DropConnections() // a reconnect is not a second start
	require.NoError(t, systemd.SetReadDeadline(time.Now().Add(300*time.Millisecond)))
	n, err = systemd.Read(buf)
	require.True(t, errors.Is(err, os.ErrDeadlineExceeded), "systemd was told %q again", buf[:n])
}

// getStatus GETs url and returns its status code and body.
func getStatus(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer func() { _ = resp.Body.Close() }()
	var b [512]byte
	n, _ := resp.Body.Read(b[:])
	return resp.StatusCode, string(b[:n])
}
