package image

import (
	"archive/tar"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
)

// refNameAnnotation names an image of an OCI layout's index, as
// `skopeo copy oci-archive:FILE:NAME` picks it.
const refNameAnnotation = "org.opencontainers.image.ref.name"

// WriteArchive writes img, named ref, as an OCI image layout (oci-layout,
// index.json, blobs/sha256/...) in a tar archive to w. go-containerregistry
// lays it out in a temporary directory; the tar lists that directory in
// lexical order (filepath.WalkDir's), every entry owned by root with the
// mode it had and mtime, so the archive's bytes depend only on img and
// ref.
func WriteArchive(w io.Writer, img v1.Image, ref string, mtime time.Time) error {
	dir, err := os.MkdirTemp("", "wsfan-oci-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(dir) }() // a temporary copy: the archive is what counts
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return fmt.Errorf("failed to start the OCI layout: %w", err)
	}
	if err := p.AppendImage(img, layout.WithAnnotations(map[string]string{refNameAnnotation: ref})); err != nil {
		return fmt.Errorf("failed to write the image into the OCI layout: %w", err)
	}
	tw := tar.NewWriter(w)
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == dir {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		h := &tar.Header{Name: filepath.ToSlash(rel), ModTime: mtime, Format: tar.FormatPAX}
		if d.IsDir() {
			h.Typeflag, h.Name, h.Mode = tar.TypeDir, h.Name+"/", 0o755
			return tw.WriteHeader(h)
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer func() { _ = f.Close() }() // read only
		fi, err := f.Stat()
		if err != nil {
			return err
		}
		h.Typeflag, h.Mode, h.Size = tar.TypeReg, 0o644, fi.Size()
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		_, err = io.Copy(tw, f)
		return err
	})
	if err != nil {
		return fmt.Errorf("failed to archive the OCI layout: %w", err)
	}
	return tw.Close()
}

// ReadArchive unpacks an archive WriteArchive wrote into dir and returns
// its one image, checking that there is exactly one.
func ReadArchive(r io.Reader, dir string) (v1.Image, error) {
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("failed to read the archive: %w", err)
		}
		path, err := safeJoin(dir, h.Name)
		if err != nil {
			return nil, err
		}
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(path, 0o755)
		case tar.TypeReg:
			err = writeFile(path, tr)
		default:
			err = fmt.Errorf("the archive holds %s, neither file nor directory", h.Name)
		}
		if err != nil {
			return nil, err
		}
	}
	ii, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		return nil, fmt.Errorf("not an OCI layout: %w", err)
	}
	im, err := ii.IndexManifest()
	if err != nil {
		return nil, err
	}
	if len(im.Manifests) != 1 {
		return nil, fmt.Errorf("the index lists %d manifests, want 1", len(im.Manifests))
	}
	return ii.Image(im.Manifests[0].Digest)
}

// safeJoin is name under dir, refusing a name that leaves it.
func safeJoin(dir, name string) (string, error) {
	if !filepath.IsLocal(filepath.FromSlash(name)) {
		return "", fmt.Errorf("the archive holds %q, outside its root", name)
	}
	return filepath.Join(dir, filepath.FromSlash(name)), nil
}

// writeFile copies r to a new file at path.
func writeFile(path string, r io.Reader) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}
