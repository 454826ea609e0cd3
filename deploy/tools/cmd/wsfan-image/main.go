// Command wsfan-image builds the sidecar's container image as an OCI
// archive, without a container daemon or a registry, and checks an
// archive it wrote:
//
//	wsfan-image -o wsfan-sidecar.oci.tar      # build (from the module in -module)
//	wsfan-image -check wsfan-sidecar.oci.tar  # validate, non-root user, labels
//
// The build prints the archive's size and the image's digest; two builds
// of one commit print one digest.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/wsfan/wsfan/deploy/tools/image"
)

func main() {
	out := flag.String("o", "", "the OCI archive `file` to write")
	check := flag.String("check", "", "an OCI archive `file` to check instead of building one")
	module := flag.String("module", "../..", "the wsfan module's `directory`")
	goarch := flag.String("goarch", runtime.GOARCH, "the image's `architecture`")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	var err error
	switch {
	case *check != "":
		err = checkArchive(*check)
	case *out != "":
		err = build(ctx, *module, *goarch, *out)
	default:
		err = fmt.Errorf("want -o FILE or -check FILE")
	}
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "wsfan-image:", err)
		os.Exit(1)
	}
}

// build writes the image of the module's sidecar to out.
func build(ctx context.Context, module, goarch, out string) error {
	tmp, err := os.MkdirTemp("", "wsfan-image-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(tmp) }() // the binary is in the archive
	binPath := filepath.Join(tmp, "sidecar")
	if err := image.BuildBinary(ctx, module, goarch, binPath); err != nil {
		return err
	}
	bin, err := os.ReadFile(binPath)
	if err != nil {
		return err
	}
	st, err := image.ReadStamp(bin)
	if err != nil {
		return err
	}
	img, err := image.Build(bin, goarch)
	if err != nil {
		return err
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	if err := image.WriteArchive(f, img, tag(st.Version), st.Time); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	fi, err := os.Stat(out)
	if err != nil {
		return err
	}
	d, err := img.Digest()
	if err != nil {
		return err
	}
	fmt.Printf("wrote %s: %.1f MB, image %s, %s commit %s\n", out, float64(fi.Size())/1e6, d, st.Version, st.Revision)
	return nil
}

// tag is the image's name in the archive: the module version, which a
// tag may hold but for the + of a dirty build's "+dirty".
func tag(version string) string { return strings.ReplaceAll(version, "+", "-") }

// checkArchive reads an archive and checks its image.
func checkArchive(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }() // read only
	dir, err := os.MkdirTemp("", "wsfan-image-check-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	img, err := image.ReadArchive(f, dir)
	if err != nil {
		return err
	}
	if err := image.Check(img); err != nil {
		return err
	}
	d, err := img.Digest()
	if err != nil {
		return err
	}
	fmt.Printf("%s: a valid OCI image, %s, non-root\n", path, d)
	return nil
}
