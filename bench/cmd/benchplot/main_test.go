package main

import (
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// svgText returns the text of an SVG's <text> elements, in order: the
// titles, axis labels, ticks and bar labels a reader sees.
func svgText(t *testing.T, svg []byte) []string {
	t.Helper()
	var texts []string
	for _, m := range regexp.MustCompile(`(?s)<text[^>]*>([^<]*)</text>`).FindAllSubmatch(svg, -1) {
		texts = append(texts, string(m[1]))
	}
	require.NotEmpty(t, texts)
	return texts
}

// plotFiles runs the command on files and returns the SVGs it wrote, by name.
func plotFiles(t *testing.T, files ...string) map[string][]byte {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, run(append([]string{"-o", dir}, files...), io.Discard, io.Discard))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	out := make(map[string][]byte)
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		out[e.Name()] = b
	}
	return out
}

// The charts committed under bench/results/ are those of baseline.txt:
// the same files, showing the same text (titles, ticks, medians). The
// coordinates are not compared, so a platform's last float digit does
// not matter.
func TestCommittedChartsAreCurrent(t *testing.T) {
	const results = "../../results"
	got := plotFiles(t, filepath.Join(results, "baseline.txt"))
	committed, err := filepath.Glob(filepath.Join(results, "*.svg"))
	require.NoError(t, err)
	var names []string
	for _, path := range committed {
		names = append(names, filepath.Base(path))
	}
	var want []string
	for _, c := range charts {
		want = append(want, c.file)
	}
	slices.Sort(names)
	slices.Sort(want)
	require.Equal(t, want, names, "the charts under bench/results/: run `make bench-plot NEW=` (baseline only)")
	for _, name := range names {
		b, err := os.ReadFile(filepath.Join(results, name))
		require.NoError(t, err)
		assert.Equal(t, svgText(t, got[name]), svgText(t, b), "%s is not baseline.txt's: run `make bench-plot NEW=` (baseline only)", name)
	}
}

// One file: a bar per implementation, labelled with its median; the
// charts without results are not written.
func TestOneFile(t *testing.T) {
	out := plotFiles(t, "testdata/old.txt")
	assert.Len(t, out, 2, "only the charts with Notify")
	text := svgText(t, out["peers-throughput.svg"])
	for _, want := range []string{"Notify", "msg/s", "wsfan", "go-ethereum", "gorilla", "1.2M", "1.203M", "72.18k", "857.1k",
		"higher is better · bars: median of the runs · whiskers: 95% confidence interval"} {
		assert.Contains(t, text, want)
	}
	assert.Contains(t, svgText(t, out["peers-allocs.svg"]), "34")
}

// Two files: outlined and filled bars, each group labelled with the second
// file's median and benchstat's verdict on the change.
func TestTwoFiles(t *testing.T) {
	out := plotFiles(t, "testdata/old.txt", "testdata/new.txt")
	text := strings.Join(svgText(t, out["peers-throughput.svg"]), "|")
	assert.Contains(t, text, "outlined: old.txt, filled: new.txt")
	assert.Contains(t, text, "1.504M|+25.00%", "wsfan: 1.203M → 1.504M, significant")
	assert.Contains(t, text, "72.4k|~", "go-ethereum: +0.3%, not significant")
	assert.Contains(t, strings.Join(svgText(t, out["peers-allocs.svg"]), "|"), "34|~", "the same counts")
}

func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.txt")
	require.NoError(t, os.WriteFile(bad, []byte("BenchmarkX-2 10 abc ns/op\n"), 0o600))
	err := run([]string{"-o", dir, bad}, io.Discard, io.Discard)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "bad.txt:1")

	empty := filepath.Join(dir, "empty.txt")
	require.NoError(t, os.WriteFile(empty, []byte("goos: linux\n"), 0o600))
	err = run([]string{"-o", dir, empty}, io.Discard, io.Discard)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no benchmark results")

	assert.Error(t, run([]string{"-o", dir}, io.Discard, io.Discard), "no file")
	assert.Error(t, run([]string{"-o", dir, empty, empty, empty}, io.Discard, io.Discard), "three files")
}
