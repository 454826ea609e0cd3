package image

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"crypto/x509"
	"encoding/pem"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// moduleDir is the wsfan module, whose sidecar the image holds.
const moduleDir = "../../.."

// maxArchiveBytes is the budget for the archive file.
const maxArchiveBytes = 25_000_000

// Two builds of the sidecar and its image give archives of the same bytes
// (one digest), at most 25 MB; the archive read back passes
// go-containerregistry's validate and Check; its layer's binary, run
// outside any container, prints the commit it was built from and serves
// the demo on loopback until SIGTERM; its CA file parses.
func TestImage(t *testing.T) {
	var archives [2][]byte
	for i := range archives {
		binPath := filepath.Join(t.TempDir(), "sidecar")
		require.NoError(t, BuildBinary(t.Context(), moduleDir, runtime.GOARCH, binPath))
		bin, err := os.ReadFile(binPath)
		require.NoError(t, err)
		st, err := ReadStamp(bin)
		require.NoError(t, err)
		img, err := Build(bin, runtime.GOARCH)
		require.NoError(t, err)
		var b bytes.Buffer
		require.NoError(t, WriteArchive(&b, img, "test", st.Time))
		archives[i] = b.Bytes()
	}
	require.Equal(t, sha256.Sum256(archives[0]), sha256.Sum256(archives[1]), "two builds, two archives")
	require.LessOrEqual(t, len(archives[0]), maxArchiveBytes)

	img, err := ReadArchive(bytes.NewReader(archives[0]), t.TempDir())
	require.NoError(t, err)
	require.NoError(t, Check(img))
	cf, err := img.ConfigFile()
	require.NoError(t, err)
	assert.Equal(t, User, cf.Config.User)
	assert.Equal(t, "linux", cf.OS)
	head, err := exec.Command("git", "-C", moduleDir, "rev-parse", "HEAD").Output()
	require.NoError(t, err)
	assert.Equal(t, strings.TrimSpace(string(head)), cf.Config.Labels[LabelRevision])

	files := layerFiles(t, img)
	for _, name := range []string{BinaryPath[1:], caFile} {
		h := files[name].h
		require.NotNil(t, h, "%s is not in the layer", name)
		assert.Zero(t, h.Uid, "%s: the user must not own what it runs", name)
		assert.True(t, cf.Created.Time.Equal(h.ModTime), "%s: its mtime is the commit time", name)
	}
	roots := parsePEM(t, files[caFile].body)
	assert.Greater(t, roots, 100, "CA roots")

	bin := filepath.Join(t.TempDir(), "sidecar")
	require.NoError(t, os.WriteFile(bin, files[BinaryPath[1:]].body, 0o755))
	out, err := exec.Command(bin, "-version").CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "commit "+cf.Config.Labels[LabelRevision])
	assert.Contains(t, string(out), cf.Config.Labels[LabelVersion])

	serveDemo(t, bin)
}

// layerFile is a regular file of the image's filesystem.
type layerFile struct {
	h    *tar.Header
	body []byte
}

// layerFiles reads the image's flattened filesystem (mutate.Extract).
func layerFiles(t *testing.T, img v1.Image) map[string]layerFile {
	t.Helper()
	rc := mutate.Extract(img)
	defer func() { _ = rc.Close() }()
	files := make(map[string]layerFile)
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files
		}
		require.NoError(t, err)
		body, err := io.ReadAll(tr)
		require.NoError(t, err)
		files[h.Name] = layerFile{h: h, body: body}
	}
}

// parsePEM counts the certificates of a PEM file, failing on anything
// else in it.
func parsePEM(t *testing.T, b []byte) int {
	t.Helper()
	n := 0
	for {
		var blk *pem.Block
		blk, b = pem.Decode(b)
		if blk == nil {
			require.Empty(t, strings.TrimSpace(string(b)), "not PEM")
			return n
		}
		_, err := x509.ParseCertificate(blk.Bytes)
		require.NoError(t, err)
		n++
	}
}

// serveDemo runs bin -demo on a loopback port, waits (at most 20 s) for
// /readyz to answer 200, checks /healthz, and stops it with SIGTERM,
// which it must exit from cleanly.
func serveDemo(t *testing.T, bin string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())

	var logs bytes.Buffer
	cmd := exec.Command(bin, "-demo", "-listen", addr)
	cmd.Stdout, cmd.Stderr = &logs, &logs
	require.NoError(t, cmd.Start())
	defer func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}()
	ready := false
	for range 200 {
		if resp, err := http.Get("http://" + addr + "/readyz"); err == nil {
			_ = resp.Body.Close()
			if ready = resp.StatusCode == http.StatusOK; ready {
				break
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	require.True(t, ready, "the demo never turned ready: %s", &logs)
	resp, err := http.Get("http://" + addr + "/healthz")
	require.NoError(t, err)
	_ = resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	require.NoError(t, cmd.Wait(), "%s", &logs)
}
