package image

import (
	"archive/tar"
	"bytes"
	"debug/buildinfo"
	"errors"
	"fmt"
	"io"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Where the image puts things, and who it runs as.
const (
	// BinaryPath is the sidecar in the image, its entrypoint.
	BinaryPath = "/sidecar"
	// User is the image's user and group: distroless's "nonroot", a
	// number so Kubernetes' runAsNonRoot can check it without an
	// /etc/passwd.
	User = "65532:65532"
	// Port is the port the image declares; the sidecar listens there when
	// run with -listen 0.0.0.0:8765 (or WSFAN_LISTEN), which, not being
	// loopback, requires a token.
	Port = "8765/tcp"
)

// The OCI annotation keys the image's labels use.
const (
	LabelSource   = "org.opencontainers.image.source"
	LabelVersion  = "org.opencontainers.image.version"
	LabelRevision = "org.opencontainers.image.revision"
	LabelCreated  = "org.opencontainers.image.created"
	LabelTitle    = "org.opencontainers.image.title"
)

// Stamp is what the Go toolchain wrote into a binary that the image
// repeats: its module, version, commit and commit time.
type Stamp struct {
	Module   string    // module path, github.com/wsfan/wsfan
	Version  string    // module version derived from the commit
	Revision string    // the commit's hash
	Time     time.Time // the commit's time: every timestamp in the image
}

// ReadStamp reads a Go binary's build information. A binary built
// without VCS stamping (-buildvcs=false, or outside a git work tree) is
// refused: the image would have no commit to name and no time to use.
func ReadStamp(bin []byte) (Stamp, error) {
	info, err := buildinfo.Read(bytes.NewReader(bin))
	if err != nil {
		return Stamp{}, fmt.Errorf("failed to read the binary's build information: %w", err)
	}
	s := Stamp{Module: info.Main.Path, Version: info.Main.Version}
	var vcsTime string
	for _, kv := range info.Settings {
		switch kv.Key {
		case "vcs.revision":
			s.Revision = kv.Value
		case "vcs.time":
			vcsTime = kv.Value
		}
	}
	if s.Revision == "" || vcsTime == "" {
		return Stamp{}, errors.New("the binary has no VCS stamp (vcs.revision, vcs.time): build it with -buildvcs=true in a git work tree")
	}
	if s.Time, err = time.Parse(time.RFC3339, vcsTime); err != nil {
		return Stamp{}, fmt.Errorf("the binary's vcs.time %q: %w", vcsTime, err)
	}
	return s, nil
}

// Build returns the image of a linux/goarch sidecar binary: one layer
// holding the binary at BinaryPath and the CA roots at
// /etc/ssl/certs/ca-certificates.crt, on an empty base, run as User,
// labelled with the binary's Stamp, every timestamp the commit time.
func Build(bin []byte, goarch string) (v1.Image, error) {
	st, err := ReadStamp(bin)
	if err != nil {
		return nil, err
	}
	layerTar, err := rootfs(bin, st.Time)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, fmt.Errorf("failed to make the layer: %w", err)
	}
	created := v1.Time{Time: st.Time}
	base := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	img, err := mutate.Append(base, mutate.Addendum{
		Layer:     layer,
		MediaType: types.OCILayer,
		History:   v1.History{Created: created, CreatedBy: "deploy/tools/image", Comment: "the sidecar and the CA roots"},
	})
	if err != nil {
		return nil, fmt.Errorf("failed to add the layer: %w", err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.Created = created
	cf.OS, cf.Architecture = "linux", goarch
	cf.Config.User = User
	cf.Config.Entrypoint = []string{BinaryPath}
	cf.Config.ExposedPorts = map[string]struct{}{Port: {}}
	cf.Config.Labels = map[string]string{
		LabelSource:   "https://" + st.Module,
		LabelVersion:  st.Version,
		LabelRevision: st.Revision,
		LabelCreated:  st.Time.UTC().Format(time.RFC3339),
		LabelTitle:    "wsfan sidecar",
	}
	return mutate.ConfigFile(img, cf)
}

// rootfs is the layer's tar: the directories, the CA roots and the
// binary, owned by root (the user cannot change them), every time mtime.
func rootfs(bin []byte, mtime time.Time) ([]byte, error) {
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	entries := []struct {
		name string
		mode int64
		body []byte
		dir  bool
	}{
		{name: "etc/", mode: 0o755, dir: true},
		{name: "etc/ssl/", mode: 0o755, dir: true},
		{name: "etc/ssl/certs/", mode: 0o755, dir: true},
		{name: caFile, mode: 0o644, body: rootsPEM()},
		{name: BinaryPath[1:], mode: 0o755, body: bin},
	}
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Mode: e.mode, ModTime: mtime, Format: tar.FormatPAX, Typeflag: tar.TypeReg, Size: int64(len(e.body))}
		if e.dir {
			h.Typeflag = tar.TypeDir
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(e.body); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
