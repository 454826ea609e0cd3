package wsfan_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// allowedHelper is the one test-helper package that the product may
// import: exchangetest, the in-process test exchange, which the sidecar's
// demo mode (-demo) and cmd/replay serve by design (see its doc).
const allowedHelper = "github.com/wsfan/wsfan/pkg/exchangetest"

// No non-test file of pkg/ or cmd/ imports a test-helper package of this
// module (one whose name begins or ends with "test": testutil,
// logintest, sidecartest, protocoltest), exchangetest aside; a helper package may
// import another. The product's binary and the library's importers would
// otherwise carry test code.
func TestNoTestHelperImports(t *testing.T) {
	var found []string
	for _, root := range []string{"pkg", "cmd"} {
		found = append(found, helperImports(t, root)...)
	}
	for _, f := range found {
		t.Errorf("a test-helper package imported by the product: %s", f)
	}

	// The rule sees a violation: a product file importing testutil.
	dir := filepath.Join(t.TempDir(), "pkg", "product")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bad := "package product\n\nimport _ \"github.com/wsfan/wsfan/internal/testutil\"\n"
	if err := os.WriteFile(filepath.Join(dir, "product.go"), []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := helperImports(t, filepath.Dir(dir)); len(got) != 1 {
		t.Errorf("a product file importing testutil: found %v, want it", got)
	}
}

// helperImports lists "file: import" for every non-test Go file under
// root, outside test-helper packages and testdata, that imports a
// test-helper package other than exchangetest.
func helperImports(t *testing.T, root string) []string {
	t.Helper()
	var found []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == "testdata" || isHelper(d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			ip, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(ip, module) && isHelper(path.Base(ip)) && ip != allowedHelper {
				found = append(found, p+": "+ip)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// module is this module's import path, and a slash.
const module = "github.com/wsfan/wsfan/"

// isHelper reports whether a package of this name is a test helper.
func isHelper(name string) bool {
	return strings.HasPrefix(name, "test") || strings.HasSuffix(name, "test")
}
