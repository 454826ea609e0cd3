package image

import (
	"fmt"
	"strconv"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/validate"
)

// Check validates img with go-containerregistry's validate (every digest
// and size in the manifest and config matches the blobs, the layers
// decompress to their diff IDs) and checks what Build promises: a
// numeric non-root user, the entrypoint, and the source, version and
// revision labels.
func Check(img v1.Image) error {
	if err := validate.Image(img); err != nil {
		return fmt.Errorf("invalid image: %w", err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return err
	}
	uid, _, _ := strings.Cut(cf.Config.User, ":")
	if n, err := strconv.Atoi(uid); err != nil || n == 0 {
		return fmt.Errorf("the image runs as user %q: want a numeric user other than 0", cf.Config.User)
	}
	if len(cf.Config.Entrypoint) != 1 || cf.Config.Entrypoint[0] != BinaryPath {
		return fmt.Errorf("the image's entrypoint is %q, want [%s]", cf.Config.Entrypoint, BinaryPath)
	}
	for _, k := range []string{LabelSource, LabelVersion, LabelRevision} {
		if cf.Config.Labels[k] == "" {
			return fmt.Errorf("the image has no %s label", k)
		}
	}
	return nil
}
