package image

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// BuildBinary builds the sidecar (./cmd/sidecar of the module in
// moduleDir) for linux/goarch into out: static (CGO_ENABLED=0), with
// -trimpath so no path of the build machine is in it, with its symbol
// table stripped (-s -w; stack traces keep their function names), and
// with VCS stamping on whatever GOFLAGS says, so -version prints the
// module version and the commit, and Build finds the commit time.
func BuildBinary(ctx context.Context, moduleDir, goarch, out string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-buildvcs=true", "-ldflags=-s -w", "-o", out, "./cmd/sidecar")
	cmd.Dir = moduleDir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+goarch)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build ./cmd/sidecar: %w: %s", err, strings.TrimSpace(string(b)))
	}
	return nil
}
