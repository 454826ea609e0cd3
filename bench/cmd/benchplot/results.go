package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchmath"
)

// results are the summaries of one or two results files.
type results struct {
	files []string // base names, in the order given: baseline, latest
	// the runs of each file, by benchmark (name without the impl part
	// and GOMAXPROCS suffix, e.g. "CallEcho/callers=1"), implementation
	// ("wsfan", or "" for benchmarks without one) and unit as written
	// ("req/s", "allocs/op").
	samples []map[sampleKey]*benchmath.Sample
}

type sampleKey struct{ bench, impl, unit string }

// readResults reads each file with benchfmt, as benchstat does.
func readResults(paths ...string) (*results, error) {
	res := &results{}
	for _, path := range paths {
		values, err := readFile(path)
		if err != nil {
			return nil, err
		}
		samples := make(map[sampleKey]*benchmath.Sample, len(values))
		for k, vs := range values {
			samples[k] = benchmath.NewSample(vs, &benchmath.DefaultThresholds)
		}
		res.files = append(res.files, filepath.Base(path))
		res.samples = append(res.samples, samples)
	}
	return res, nil
}

// readFile collects every value of a results file by benchmark,
// implementation and unit. A line benchfmt cannot parse is an error with
// its file and line.
func readFile(path string) (map[sampleKey][]float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	samples := make(map[sampleKey][]float64)
	r := benchfmt.NewReader(f, path)
	for r.Scan() {
		switch rec := r.Result().(type) {
		case *benchfmt.SyntaxError:
			return nil, rec
		case *benchfmt.Result:
			bench, impl := splitName(rec.Name)
			for _, v := range rec.Values {
				unit, val := v.Unit, v.Value
				if v.OrigUnit != "" { // the unit as the benchmark wrote it
					unit, val = v.OrigUnit, v.OrigValue
				}
				k := sampleKey{bench, impl, unit}
				samples[k] = append(samples[k], val)
			}
		}
	}
	if err := r.Err(); err != nil {
		return nil, err
	}
	if len(samples) == 0 {
		return nil, fmt.Errorf("%s: no benchmark results", path)
	}
	return samples, nil
}

// splitName splits "CallEcho/callers=1/impl=geth-2" into the benchmark,
// "CallEcho/callers=1", and the implementation, "geth".
func splitName(n benchfmt.Name) (bench, impl string) {
	base, parts := n.Parts()
	var b strings.Builder
	b.Write(base)
	for _, p := range parts {
		if v, ok := bytes.CutPrefix(p, []byte("/impl=")); ok {
			impl = string(v)
		} else if p[0] == '/' {
			b.Write(p)
		}
	}
	return b.String(), impl
}

// summary summarises file i's runs of a benchmark, implementation and
// unit as benchstat does by default: the median, with a 95% confidence
// interval that assumes nothing about the distribution.
func (r *results) summary(i int, bench, impl, unit string) (benchmath.Summary, bool) {
	s, ok := r.samples[i][sampleKey{bench, impl, unit}]
	if !ok {
		return benchmath.Summary{}, false
	}
	return benchmath.AssumeNothing.Summary(s, 0.95), true
}

// change says how file 1's runs differ from file 0's, as benchstat's
// delta column does: "-20%" or, when a Mann-Whitney U-test finds no
// significant difference, "~". Empty unless both files have the runs.
func (r *results) change(bench, impl, unit string) string {
	k := sampleKey{bench, impl, unit}
	if len(r.samples) < 2 || r.samples[0][k] == nil || r.samples[1][k] == nil {
		return ""
	}
	old, new := r.samples[0][k], r.samples[1][k]
	c := benchmath.AssumeNothing.Compare(old, new)
	return c.FormatDelta(benchmath.AssumeNothing.Summary(old, 0.95).Center, benchmath.AssumeNothing.Summary(new, 0.95).Center)
}
