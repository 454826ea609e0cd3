// Command benchplot draws benchmark results as SVG bar charts: wsfan beside
// go-ethereum's rpc client and raw gorilla/websocket, benchmark by
// benchmark, from the files `make bench` writes (the Go benchmark format
// benchstat reads). Each bar is benchstat's summary of the runs, the
// median, with its 95% confidence interval as an error bar. Given two
// files (a baseline and the latest run), each peer gets a bar per file.
//
//	benchplot [-o dir] baseline.txt [latest.txt]
//
// `make bench-plot` runs it on bench/results/baseline.txt (and latest.txt
// when it exists) and writes the charts BENCHMARKS.md shows into
// bench/results/.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "benchplot:", err)
		os.Exit(1)
	}
}

// run parses the files named by args and writes one SVG per chart that has
// data, naming each file it wrote on stdout.
func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("benchplot", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", ".", "`directory` the SVG files are written to")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: benchplot [-o dir] baseline.txt [latest.txt]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() < 1 || fs.NArg() > 2 {
		fs.Usage()
		return fmt.Errorf("want one or two results files, got %d", fs.NArg())
	}
	res, err := readResults(fs.Args()...)
	if err != nil {
		return err
	}
	for _, c := range charts {
		svg, ok, err := c.render(res)
		if err != nil {
			return fmt.Errorf("%s: %w", c.file, err)
		}
		if !ok {
			fmt.Fprintf(stderr, "benchplot: %s: no results for it, skipped\n", c.file)
			continue
		}
		path := filepath.Join(*out, c.file)
		if err := os.WriteFile(path, svg, 0o644); err != nil {
			return err
		}
		fmt.Fprintln(stdout, "wrote", path)
	}
	return nil
}
