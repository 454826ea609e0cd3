// Command wsfan-chart lints and renders the wsfan Helm chart with the Helm
// Go SDK, for a machine without the helm binary:
//
//	wsfan-chart -f my-values.yaml ../../helm/wsfan > wsfan.yaml
//	kubectl apply -n markets -f wsfan.yaml
//
// It is `helm lint --strict` followed by `helm template`: a value the
// chart's schema refuses, or any lint warning, is an error and nothing is
// printed.
package main

import (
	"flag"
	"fmt"
	"os"

	"helm.sh/helm/v3/pkg/chartutil"

	"github.com/wsfan/wsfan/deploy/tools/chart"
)

func main() {
	values := flag.String("f", "", "a values `file` over the chart's values.yaml")
	name := flag.String("name", "wsfan", "the release's `name`")
	namespace := flag.String("namespace", "default", "the release's `namespace`")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: wsfan-chart [-f values.yaml] [-name wsfan] [-namespace default] CHART_DIR\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(flag.Arg(0), *values, chart.Release{Name: *name, Namespace: *namespace}); err != nil {
		fmt.Fprintln(os.Stderr, "wsfan-chart:", err)
		os.Exit(1)
	}
}

// run lints and renders the chart in dir to stdout.
func run(dir, valuesFile string, rel chart.Release) error {
	vals := map[string]any{}
	if valuesFile != "" {
		v, err := chartutil.ReadValuesFile(valuesFile)
		if err != nil {
			return err
		}
		vals = v
	}
	if err := chart.Lint(dir, vals, rel); err != nil {
		return err
	}
	r, err := chart.Render(dir, vals, rel)
	if err != nil {
		return err
	}
	_, err = fmt.Print(r.String())
	return err
}
