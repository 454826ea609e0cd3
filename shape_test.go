package wsfan_test

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The core's shape, as the issue that made pkg/client a connection core
// again measured it, kept from drifting back: the venue seam is a few
// families of interfaces, not one per quirk; the core holds the venue as
// one value and does not test it for optional hooks; no function of the
// core grows past a screen; the connection-holders built on the core
// (pkg/pool, pkg/standby) stay outside it; and the core grows no more
// (a ratchet at its size when issue 45 was left, 8,092 lines, against
// the 7,000 that issue asked: a feature that can live on the core's
// exported seams lives beside it, and one that cannot raises the number
// here, in the commit that says why). Raised since: 8,115 for client.Sink,
// the place the reader read handed to a composite's sink, which a
// standby's merge read again for each first arrival (issue 46).
const (
	maxProtocolInterfaces = 8    // exported interface types of pkg/protocol, Protocol and Server included
	maxCoreAssertions     = 6    // type assertions and type-switch cases on them in pkg/client
	maxCoreFuncLines      = 80   // the longest function of pkg/client, doc comment aside
	maxCoreLines          = 8115 // lines of pkg/client's non-test Go files
)

func TestCoreShape(t *testing.T) {
	ifaces := protocolInterfaces(t, parseDir(t, "pkg/protocol"))
	if len(ifaces) > maxProtocolInterfaces {
		t.Errorf("pkg/protocol declares %d exported interfaces (%v), at most %d: a venue's quirk is data (protocol.Venue) or one of the families",
			len(ifaces), keys(ifaces), maxProtocolInterfaces)
	}
	core := parseDir(t, "pkg/client")
	if got := coreAssertions(core, ifaces); len(got) > maxCoreAssertions {
		t.Errorf("pkg/client asserts protocol interfaces %d times, at most %d: %v", len(got), maxCoreAssertions, got)
	}
	for _, long := range longFuncs(core, maxCoreFuncLines) {
		t.Errorf("pkg/client: %s is over %d lines", long, maxCoreFuncLines)
	}
	if n := lines(t, "pkg/client"); n > maxCoreLines {
		t.Errorf("pkg/client has %d lines of non-test Go, at most %d: put the new code beside the core, on its exported seams", n, maxCoreLines)
	}
	core.eachType(func(ts *ast.TypeSpec) {
		if ts.Name.Name == "Pool" || ts.Name.Name == "Standby" {
			t.Errorf("pkg/client declares %s: it lives in pkg/%s, on the core's exported seams", ts.Name.Name, strings.ToLower(ts.Name.Name))
		}
	})
}

// The rules see what they forbid.
func TestCoreShapeRulesSeeViolations(t *testing.T) {
	src := `package client
import "github.com/wsfan/wsfan/pkg/protocol"
func f(p any) {
	_, _ = p.(protocol.Recoverer)
	switch p.(type) {
	case protocol.Server, protocol.TopicAcking:
	}
` + strings.Repeat("\tprintln()\n", maxCoreFuncLines) + "}\n"
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "x.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	pkg := parsedDir{fset: fset, files: []*ast.File{f}}
	ifaces := map[string]bool{"Recoverer": true, "Server": true, "TopicAcking": true}
	if got := coreAssertions(pkg, ifaces); len(got) != 3 {
		t.Errorf("assertions found: %v, want 3", got)
	}
	if got := longFuncs(pkg, maxCoreFuncLines); len(got) != 1 {
		t.Errorf("long functions found: %v, want f", got)
	}
}

// parsedDir is a directory's non-test Go files, parsed.
type parsedDir struct {
	fset  *token.FileSet
	files []*ast.File
}

func parseDir(t *testing.T, dir string) parsedDir {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	pd := parsedDir{fset: token.NewFileSet()}
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(pd.fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		pd.files = append(pd.files, f)
	}
	if len(pd.files) == 0 {
		t.Fatalf("no Go files in %s", dir)
	}
	return pd
}

// lines counts the lines of dir's non-test Go files.
func lines(t *testing.T, dir string) int {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		n += bytes.Count(b, []byte("\n"))
	}
	return n
}

// eachType calls f with each type pd declares at its top level.
func (pd parsedDir) eachType(f func(*ast.TypeSpec)) {
	for _, file := range pd.files {
		for _, d := range file.Decls {
			if g, ok := d.(*ast.GenDecl); ok {
				for _, s := range g.Specs {
					if ts, ok := s.(*ast.TypeSpec); ok {
						f(ts)
					}
				}
			}
		}
	}
}

// protocolInterfaces are the exported interface types pd declares.
func protocolInterfaces(t *testing.T, pd parsedDir) map[string]bool {
	t.Helper()
	ifaces := map[string]bool{}
	pd.eachType(func(ts *ast.TypeSpec) {
		if _, isIface := ts.Type.(*ast.InterfaceType); isIface && ts.Name.IsExported() {
			ifaces[ts.Name.Name] = true
		}
	})
	if len(ifaces) == 0 {
		t.Fatal("pkg/protocol declares no interface: the walk is broken")
	}
	return ifaces
}

// coreAssertions lists the places in pd that assert one of ifaces
// (protocol.X), in a type assertion or a type switch's case.
func coreAssertions(pd parsedDir, ifaces map[string]bool) []string {
	var found []string
	check := func(e ast.Expr) {
		if sel, ok := e.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == "protocol" && ifaces[sel.Sel.Name] {
				found = append(found, pd.fset.Position(e.Pos()).String()+" "+sel.Sel.Name)
			}
		}
	}
	for _, f := range pd.files {
		ast.Inspect(f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.TypeAssertExpr:
				if x.Type != nil {
					check(x.Type)
				}
			case *ast.TypeSwitchStmt:
				for _, c := range x.Body.List {
					for _, e := range c.(*ast.CaseClause).List {
						check(e)
					}
				}
			}
			return true
		})
	}
	return found
}

// longFuncs lists pd's functions longer than most lines, from func to
// its closing brace.
func longFuncs(pd parsedDir, most int) []string {
	var found []string
	for _, f := range pd.files {
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok {
				start, end := pd.fset.Position(fd.Pos()), pd.fset.Position(fd.End())
				if end.Line-start.Line+1 > most {
					found = append(found, start.String()+" "+fd.Name.Name)
				}
			}
		}
	}
	return found
}

func keys(m map[string]bool) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}
